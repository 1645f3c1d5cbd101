import { describe, expect, it } from 'vitest';
import { printable, printableDeep } from './printable.ts';

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

describe('printableDeep', () => {
  it('cleans every string of a JSON-like value, keys too, and leaves other values as they are', () => {
    const value = { '\x1b[2Jkey': ['a\x1b]0;t\x07b', 3, null, true], nested: { msg: 'x\x9b2Jy', n: 1.5 }, plain: 'ok' };
    expect(printableDeep(value)).toEqual({ key: ['ab', 3, null, true], nested: { msg: 'xy', n: 1.5 }, plain: 'ok' });
  });
});
