/**
 * FNV-1a, 32 bits, over the UTF-8 bytes of a string. Revision names are built from it (`<app>-<hash>`) and
 * are persisted on clusters: its output for a given text must never change.
 */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
