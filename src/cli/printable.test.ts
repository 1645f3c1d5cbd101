import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { StatusPrinter } from './follow.ts';
import { printable } from './printable.ts';
import type { RolloutView } from './view.ts';

describe('printable', () => {
  it.each<[string, string, string]>([
    ['colour codes', 'hook: \x1b[31mred\x1b[0m pod', 'hook: red pod'],
    ['cursor moves and line erase', 'ok\x1b[2K\x1b[1A\rrewritten', 'ok rewritten'],
    ['a window title (OSC, BEL-ended)', '\x1b]0;pwned\x07msg', 'msg'],
    ['a hyperlink (OSC 8, ST-ended)', '\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\', 'click'],
    ['a C1 CSI', 'a\x9b2Jb', 'ab'],
    ['other C0 and C1 controls', 'be\x07ll\x00 \x85next\x7f', 'bell next'],
    ['text-reordering controls', 'abc\u202edcba', 'abcdcba'],
    ['tabs and line breaks', 'one\ttwo\nthree\r\nfour', 'one two three  four'],
    ['plain text, unicode included', 'pods web-0…web-2 wait (1m30s) ✓', 'pods web-0…web-2 wait (1m30s) ✓'],
  ])('removes %s', (_what, input, output) => {
    expect(printable(input)).toBe(output);
  });

  it('keeps line feeds when asked (multi-line output such as history)', () => {
    expect(printable('REVISION\tCAUSE\n1\t\x1b[8mhidden\x1b[0m\n', { keepNewlines: true })).toBe('REVISION CAUSE\n1 hidden\n');
  });
});

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
