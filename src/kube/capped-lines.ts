/**
 * A stream of newline-delimited JSON (a watch) read line by line under a byte cap per line. A line within the
 * cap is handed over as text; a longer one is never held: its bytes go through a JsonSkim as they arrive and
 * only what identifies it is kept (`oversized`).
 */
import { JsonSkim, type Skimmed } from './json-skim.ts';

export type CappedLine = { kind: 'line'; text: string } | { kind: 'oversized'; bytes: number; skimmed: Skimmed };

const NEWLINE = 0x0a;

class LineState {
  private parts: Uint8Array[] = [];
  private size = 0;
  private skim: JsonSkim | undefined;
  private readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  feed(segment: Uint8Array): void {
    if (segment.length === 0) return;
    this.size += segment.length;
    if (this.skim) {
      this.skim.write(segment);
      return;
    }
    if (this.size <= this.maxBytes) {
      this.parts.push(segment);
      return;
    }
    this.skim = new JsonSkim();
    for (const p of this.parts) this.skim.write(p);
    this.skim.write(segment);
    this.parts = [];
  }

  take(): CappedLine {
    const line: CappedLine = this.skim
      ? { kind: 'oversized', bytes: this.size, skimmed: this.skim.found }
      : { kind: 'line', text: Buffer.concat(this.parts, this.size).toString('utf8') };
    this.parts = [];
    this.size = 0;
    this.skim = undefined;
    return line;
  }

  get pending(): boolean {
    return this.size > 0;
  }
}

/** The lines of `input`, each at most `maxBytes` as text; a last line without a newline counts too. */
export async function* cappedLines(input: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<CappedLine> {
  const state = new LineState(maxBytes);
  for await (const chunk of input) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === -1) {
        state.feed(chunk.subarray(start));
        break;
      }
      state.feed(chunk.subarray(start, nl));
      yield state.take();
      start = nl + 1;
    }
  }
  if (state.pending) yield state.take();
}
