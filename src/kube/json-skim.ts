/**
 * What identifies a watch event that is too large to parse: its `type` and its object's
 * `metadata.{name,namespace,uid,resourceVersion}`, picked out of the JSON bytes as they stream past, without
 * holding them. A small tokenizer: it follows strings, nesting and the key each value sits under, and keeps only
 * those few (short) strings. The apiserver writes `metadata` before `spec` and `status`, in typed and custom
 * objects alike, but the skim does not depend on that order.
 */

export interface Skimmed {
  type?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

const META_FIELDS: ReadonlySet<string> = new Set(['name', 'namespace', 'uid', 'resourceVersion']);
/** Longest key or kept value: the fields kept are names and numbers far shorter. */
const MAX_KEPT = 512;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

interface Frame {
  array: boolean;
  /** The key this container is the value of in its parent (undefined at the root and in arrays). */
  under: string | undefined;
  /** Objects: the key whose value comes next (or is being read). */
  key: string | undefined;
  expectKey: boolean;
}

export class JsonSkim {
  private readonly frames: Frame[] = [];
  private inString = false;
  private escape = false;
  private stringIsKey = false;
  private keep = false;
  private text = '';
  readonly found: Skimmed = {};

  write(bytes: Uint8Array): void {
    for (const c of bytes) this.byte(c);
  }

  private byte(c: number): void {
    if (this.inString) this.stringByte(c);
    else if (c === QUOTE) this.openString();
    else this.structural(c);
  }

  private openString(): void {
    const top = this.frames.at(-1);
    this.inString = true;
    this.stringIsKey = top !== undefined && !top.array && top.expectKey;
    this.keep = this.stringIsKey || this.wanted() !== undefined;
    this.text = '';
  }

  private structural(c: number): void {
    const top = this.frames.at(-1);
    switch (c) {
      case 0x7b: // {
      case 0x5b: // [
        this.frames.push({ array: c === 0x5b, under: top && !top.array ? top.key : undefined, key: undefined, expectKey: c === 0x7b });
        return;
      case 0x7d: // }
      case 0x5d: // ]
        this.frames.pop();
        return;
      case 0x3a: // :
        if (top && !top.array) top.expectKey = false;
        return;
      case 0x2c: // ,
        if (top && !top.array) {
          top.expectKey = true;
          top.key = undefined;
        }
        return;
      default:
        return;
    }
  }

  private stringByte(c: number): void {
    if (this.escape) {
      this.escape = false;
      this.append(c);
      return;
    }
    if (c === BACKSLASH) {
      this.escape = true;
      return;
    }
    if (c !== QUOTE) {
      this.append(c);
      return;
    }
    this.inString = false;
    const top = this.frames.at(-1);
    if (this.stringIsKey) {
      if (top) top.key = this.text;
      return;
    }
    const field = this.wanted();
    if (field) this.found[field] = this.text;
  }

  private append(c: number): void {
    if (this.keep && this.text.length < MAX_KEPT) this.text += String.fromCharCode(c);
  }

  /** The field of `found` the value being read is, if any: `type` at the top, or one of the object's metadata. */
  private wanted(): keyof Skimmed | undefined {
    const depth = this.frames.length;
    const top = this.frames[depth - 1];
    if (!top || top.array || top.key === undefined) return undefined;
    if (depth === 1) return top.key === 'type' ? 'type' : undefined;
    if (depth !== 3 || this.frames[1]?.under !== 'object' || top.under !== 'metadata') return undefined;
    return META_FIELDS.has(top.key) ? (top.key as keyof Skimmed) : undefined;
  }
}
