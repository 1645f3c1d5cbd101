/**
 * Which network addresses a tenant-directed request (a web or Prometheus check, a notification) may connect to,
 * judged on the address actually dialled (after name resolution). Never: unspecified, link-local (where cloud
 * metadata services answer), multicast, broadcast and reserved ranges, and the known metadata addresses outside
 * link-local. Loopback only in `local` scope (sandboxes and tests); private ranges (RFC 1918, shared 100.64/10,
 * IPv6 unique-local) in `private` and `local` scope, since in-cluster services live there.
 *
 * IPv6 addresses that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64
 * `64:ff9b::/96`) are judged by the IPv4 address they carry.
 */
import { isIPv4, isIPv6 } from 'node:net';

export const NETWORK_SCOPES = ['public', 'private', 'local'] as const;
/** `public`: public addresses only; `private`: also private ranges; `local`: also loopback. */
export type NetworkScope = (typeof NETWORK_SCOPES)[number];

type AddressClass = 'public' | 'private' | 'loopback' | 'link-local' | 'metadata' | 'unspecified' | 'multicast' | 'reserved' | 'invalid';

/** Metadata services that answer outside link-local ranges (Alibaba Cloud; AWS over IPv6). */
const METADATA = new Set(['100.100.100.200', 'fd00:ec2:0:0:0:0:0:254']);

const v4Bytes = (text: string): number[] => text.split('.').map(Number);

/** The 16 bytes of an IPv6 address (zone id dropped), or undefined. */
export function v6Bytes(text: string): number[] | undefined {
  const bare = text.replace(/%.*$/, '');
  if (!isIPv6(bare)) return undefined;
  let head = bare;
  let tail: number[] = [];
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (dotted?.[1]) {
    tail = v4Bytes(dotted[1]);
    // `::a.b.c.d` keeps its `::`; `1:2:3:4:5:6:a.b.c.d` drops the colon before the dotted part.
    head = bare.slice(0, dotted.index + 1);
    if (!head.endsWith('::')) head = head.slice(0, -1);
  }
  const [left = '', right] = head.split('::');
  const words = (s: string): number[] => (s === '' ? [] : s.split(':').map((w) => parseInt(w, 16)));
  const l = words(left);
  const r = right === undefined ? [] : words(right);
  const fill = 8 - tail.length / 2 - l.length - r.length;
  const all = [...l, ...new Array<number>(right === undefined ? 0 : fill).fill(0), ...r];
  const bytes = all.flatMap((w) => [w >> 8, w & 0xff]);
  return [...bytes, ...tail];
}

const inV4 = (b: readonly number[], base: readonly number[], bits: number): boolean => {
  for (let i = 0; i < 4; i++) {
    const take = Math.max(0, Math.min(8, bits - i * 8));
    const mask = take === 0 ? 0 : (0xff << (8 - take)) & 0xff;
    if (((b[i] ?? 0) & mask) !== ((base[i] ?? 0) & mask)) return false;
  }
  return true;
};

function classifyV4(b: readonly number[]): AddressClass {
  if (METADATA.has(b.join('.'))) return 'metadata';
  if (inV4(b, [169, 254, 169, 254], 32) || inV4(b, [169, 254, 170, 2], 32)) return 'metadata';
  if (inV4(b, [0, 0, 0, 0], 8)) return 'unspecified';
  if (inV4(b, [127, 0, 0, 0], 8)) return 'loopback';
  if (inV4(b, [169, 254, 0, 0], 16)) return 'link-local';
  if (inV4(b, [224, 0, 0, 0], 4)) return 'multicast';
  if (inV4(b, [240, 0, 0, 0], 4)) return 'reserved';
  if (inV4(b, [10, 0, 0, 0], 8) || inV4(b, [172, 16, 0, 0], 12) || inV4(b, [192, 168, 0, 0], 16) || inV4(b, [100, 64, 0, 0], 10)) return 'private';
  return 'public';
}

const zeros = (b: readonly number[], from: number, to: number): boolean => b.slice(from, to).every((x) => x === 0);

/** The IPv4 address an IPv6 address carries: IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96), NAT64 (64:ff9b::/96). */
function carriedV4(b: readonly number[]): number[] | undefined {
  const mapped = zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff;
  const nat64 = b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(b, 4, 12);
  return mapped || nat64 || zeros(b, 0, 12) ? b.slice(12) : undefined;
}

const hextets = (b: readonly number[]): string => {
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push((((b[i] ?? 0) << 8) | (b[i + 1] ?? 0)).toString(16));
  return words.join(':');
};

/** IPv6 prefix rules on the first 16 bits, first match wins: [class, prefix, mask]. */
const V6_PREFIXES: readonly (readonly [AddressClass, number, number])[] = [
  ['link-local', 0xfe80, 0xffc0],
  ['multicast', 0xff00, 0xff00],
  ['private', 0xfc00, 0xfe00],
  ['private', 0xfec0, 0xffc0],
];

function classifyV6(b: readonly number[]): AddressClass {
  if (zeros(b, 0, 16)) return 'unspecified';
  if (zeros(b, 0, 15) && b[15] === 1) return 'loopback';
  const v4 = carriedV4(b);
  if (v4) return classifyV4(v4);
  if (METADATA.has(hextets(b))) return 'metadata';
  const head = ((b[0] ?? 0) << 8) | (b[1] ?? 0);
  return V6_PREFIXES.find(([, prefix, mask]) => (head & mask) === prefix)?.[0] ?? 'public';
}

function classify(address: string): AddressClass {
  if (isIPv4(address)) return classifyV4(v4Bytes(address));
  const b = v6Bytes(address);
  return b === undefined || b.length !== 16 ? 'invalid' : classifyV6(b);
}

const WORDS: Record<Exclude<AddressClass, 'public'>, string> = {
  private: 'a private address',
  loopback: 'a loopback address',
  'link-local': 'a link-local address',
  metadata: 'a cloud metadata address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
  invalid: 'not an IP address',
};

const ALLOWED: Record<NetworkScope, readonly AddressClass[]> = {
  public: ['public'],
  private: ['public', 'private'],
  local: ['public', 'private', 'loopback'],
};

/** Why `address` may not be dialled in `scope` ("a loopback address"), or undefined when it may. */
export function addressRefusal(address: string, scope: NetworkScope): string | undefined {
  const c = classify(address);
  return ALLOWED[scope].includes(c) || c === 'public' ? undefined : WORDS[c];
}
