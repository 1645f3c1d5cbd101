/**
 * Generated ImageLists for the admission fuzz: valid entries from a seeded PRNG, then none or one invalid
 * mutation of one entry, with the field path the apiserver's refusal must name.
 */
import { API_VERSION, IMAGE_LIST_KIND } from '../../../src/api/group.ts';
import type { Expectation } from './app-cases.ts';
import type { Obj } from './app-mutations.ts';
import type { Rng } from './prng.ts';

export interface ImageListCase {
  id: number;
  what: string;
  body: Obj;
  expect: Expectation;
}

const REPOS = ['nginx', 'registry.example.com/team/web', 'localhost:5000/a/b', 'ghcr.io/org/x_y.z-w', 'library/busybox'];

function entry(r: Rng, i: number): Obj {
  const digest = r.chance(0.2);
  const e: Obj = { image: digest ? `${r.pick(REPOS)}@sha256:${r.string(64, '0123456789abcdef')}` : `${r.pick(REPOS)}:v${i}-${r.string(r.int(1, 10))}` };
  if (r.chance(0.4)) e['alwaysPull'] = r.chance(0.5);
  if (r.chance(0.4)) e['repullIntervalSeconds'] = r.int(60, 2 ** 31 - 1);
  if (r.chance(0.2)) e['pullRequestedAt'] = new Date(Date.UTC(2020 + r.int(0, 10), r.int(0, 11), r.int(1, 28))).toISOString().replace(/\.\d+Z$/, 'Z');
  if (r.chance(0.2)) e['pullSecret'] = { namespace: `ns-${r.string(5)}`, name: `s.${r.string(8)}` };
  return e;
}

type EntryMutation = [what: string, field: (i: number) => string, mutate: (e: Obj, r: Rng) => void];

const at = (i: number) => `spec.images[${i}]`;
const ENTRY_MUTATIONS: EntryMutation[] = [
  [
    'bad image reference',
    (i) => `${at(i)}.image`,
    (e, r) => (e['image'] = r.pick(['', 'team/UPPER:v1', 'a b:c', 'ünï:1', 'x@sha256:short', `r/${r.string(5000)}`, ':tag'])),
  ],
  ['image of another type', (i) => `${at(i)}.image`, (e, r) => (e['image'] = r.pick([1, true, { a: 1 }]))],
  ['repull interval under the minimum', (i) => `${at(i)}.repullIntervalSeconds`, (e, r) => (e['repullIntervalSeconds'] = r.pick([59, 0, -1, -(2 ** 31)]))],
  ['repull interval of another type', (i) => `${at(i)}.repullIntervalSeconds`, (e, r) => (e['repullIntervalSeconds'] = r.pick(['60', 1.5, true]))],
  ['alwaysPull not a boolean', (i) => `${at(i)}.alwaysPull`, (e, r) => (e['alwaysPull'] = r.pick(['yes', 1, 'true']))],
  ['pullRequestedAt not a date-time', (i) => `${at(i)}.pullRequestedAt`, (e, r) => (e['pullRequestedAt'] = r.pick(['yesterday', '2024-13-01T00:00:00Z', '']))],
  [
    'pull secret namespace',
    (i) => `${at(i)}.pullSecret.namespace`,
    (e, r) => (e['pullSecret'] = { namespace: r.pick(['', 'Ns', 'a.b', 'x'.repeat(64)]), name: 's' }),
  ],
  ['pull secret name', (i) => `${at(i)}.pullSecret.name`, (e, r) => (e['pullSecret'] = { namespace: 'ns', name: r.pick(['', 'UP', 'a..b', 'x'.repeat(254)]) })],
  ['unknown entry field', (i) => `${at(i)}.bogus`, (e) => (e['bogus'] = 1)],
];

/** `count` cases; ImageLists are cluster-scoped, named `<prefix>-<id>`. */
export function generateImageListCases(r: Rng, count: number, prefix: string): ImageListCase[] {
  const cases: ImageListCase[] = [];
  for (let id = 0; id < count; id++) {
    const images = Array.from({ length: r.int(0, 8) }, (_, i) => entry(r, i));
    const body: Obj = { apiVersion: API_VERSION, kind: IMAGE_LIST_KIND, metadata: { name: `${prefix}-${id}` }, spec: { images } };
    const roll = r.next();
    if (roll < 0.35 || images.length === 0) {
      cases.push({ id, what: 'valid', body, expect: { outcome: 'accepted' } });
    } else if (roll < 0.45) {
      const dup = r.int(0, images.length - 1);
      images.push({ ...(images[dup] as Obj) });
      cases.push({ id, what: 'duplicate image', body, expect: { outcome: 'refused', field: `spec.images[${images.length - 1}]` } });
    } else if (roll < 0.5) {
      const filler = Array.from({ length: 1025 - images.length }, (_, i) => ({ image: `registry.example.com/many:${i}` }));
      images.push(...filler);
      cases.push({ id, what: 'more than 1024 images', body, expect: { outcome: 'refused', field: 'spec.images' } });
    } else {
      const i = r.int(0, images.length - 1);
      const [what, field, mutate] = r.pick(ENTRY_MUTATIONS);
      mutate(images[i] as Obj, r);
      cases.push({ id, what, body, expect: { outcome: 'refused', field: field(i) } });
    }
  }
  return cases;
}
