/** A worker thread entry for worker-thread.test.ts: allocates until its heap limit ends it. */
const kept: string[][] = [];
for (;;) kept.push(new Array<string>(100_000).fill('hog'));
