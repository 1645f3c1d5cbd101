import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { StatusPrinter } from './follow.ts';
import type { RolloutView } from './view.ts';

describe('StatusPrinter', () => {
  const captured = (tty: boolean): { printer: StatusPrinter; text: () => string } => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    return { printer: new StatusPrinter(out, tty), text: () => text };
  };
  const view = { state: 'progressing', line: 'held: \x1b]0;owned\x07pod\x1b[2J web-1' } as unknown as RolloutView;

  it('prints cluster messages without their control characters, on a pipe and on a terminal', async () => {
    const pipe = captured(false);
    pipe.printer.show(view);
    pipe.printer.finish('app "web" exceeded its progress deadline: \x1b[1Aboom');
    const tty = captured(true);
    tty.printer.show(view);
    await new Promise((r) => setImmediate(r));
    expect(pipe.text()).toBe('held: pod web-1\napp "web" exceeded its progress deadline: boom\n');
    // On a terminal the printer's own redraw sequence is the only escape written.
    expect(tty.text()).toBe('\r\x1b[2Kheld: pod web-1');
  });
});
