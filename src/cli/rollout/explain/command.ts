/** `ebb rollout explain app/NAME`: reads (apiserver, queues), explains (pure), prints (text or JSON). */
import type { KubeRest } from '../../../kube/rest.ts';
import type { RolloutArgs } from '../args.ts';
import { explain } from './explain.ts';
import { readQueueFacts } from './queue.ts';
import { readForExplain, readOnlyClient } from './read.ts';
import { measuredReader } from './measured.ts';
import { readOnlyDesk } from '../../../workers/measure/desk.ts';
import { printExplanation } from './render.ts';

type ExplainArgs = Extract<RolloutArgs, { op: 'explain' }>;

/** Prints the explanation; exit code 0 once it could be made (the App read), whatever the rollout's state. */
export async function explainCommand(rest: KubeRest, args: ExplainArgs, namespace: string, out: NodeJS.WriteStream = process.stdout): Promise<number> {
  const now = new Date();
  const ac = new AbortController();
  const measured = measuredReader(args.queueTimeoutMs);
  try {
    const [reads, queue] = await Promise.all([
      readForExplain(readOnlyClient(rest, ac.signal, readOnlyDesk(measured)), namespace, args.name, now),
      readQueueFacts(namespace, args.name, args.queueTimeoutMs),
    ]);
    const notes = [...reads.notes, ...[queue.note, measured.note()].filter((n) => n !== undefined)];
    const e = explain({ ...reads, queue: queue.facts, notes, now });
    out.write(printExplanation(e, { json: args.output === 'json', tty: out.isTTY === true, width: out.columns }));
    return 0;
  } finally {
    ac.abort();
    measured.close();
  }
}
