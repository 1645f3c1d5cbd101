/**
 * Generated App manifests for the admission fuzz: a valid base from a seeded PRNG, then none, one edge or one
 * invalid mutation. Each case says what the apiserver must do with it: accept it, refuse it naming `field`, or
 * either (an edge the schema may let through, which the worker must then reconcile or explain).
 */
import { API_VERSION, APP_KIND } from '../../../src/api/group.ts';
import type { Rng } from './prng.ts';
import { EDGE_MUTATIONS } from './app-edge-mutations.ts';
import { INVALID_MUTATIONS, type Mutation, type Obj } from './app-mutations.ts';

export type Expectation = { outcome: 'accepted' } | { outcome: 'refused'; field: string } | { outcome: 'either'; field: string };

export interface SpecCase {
  id: number;
  category: 'valid' | 'edge' | 'invalid';
  /** What the mutation did, e.g. `maxUnavailable "0%"`. */
  what: string;
  body: Obj;
  expect: Expectation;
  /** Small enough to really create (a handful of pods with tiny requests). */
  realizable: boolean;
}

const IMAGES = [
  'registry.example.com/team/web:v1',
  'nginx:1.27',
  'localhost:5000/a/b-c_d.e:tag-1',
  'ghcr.io/org/app@sha256:' + 'ab'.repeat(32),
  'registry.example.com:8443/deep/path/of/repo:1.0.0-rc.1',
];
const UNICODE = ['héllo wörld', '🌊 ebb & flow', '世界', 'Ωmega\u00a0space', 'emoji 👩‍💻 zwj', 'tab\tand\nnewline'];

function containers(r: Rng, n: number): Obj[] {
  const ports = new Set<number>();
  return Array.from({ length: n }, (_, i) => {
    const c: Obj = { name: `c${i}-${r.string(r.int(1, 8))}`, image: r.pick(IMAGES) };
    if (r.chance(0.5)) c['env'] = [{ name: `VAR_${i}`, value: r.pick(UNICODE) }];
    if (r.chance(0.5)) {
      let port = r.int(1, 65535);
      while (ports.has(port)) port = r.int(1, 65535);
      ports.add(port);
      c['ports'] = [{ containerPort: port, name: `p${i}` }];
    }
    if (r.chance(0.5)) c['resources'] = { requests: { cpu: r.pick(['1m', '10m', '0.01']), memory: r.pick(['1Mi', '16Mi', '1e6']) } };
    return c;
  });
}

function canarySteps(r: Rng): Obj[] {
  return Array.from({ length: r.int(1, 5) }, () => {
    if (r.chance(0.3)) return { pause: r.chance(0.5) ? {} : { duration: r.pick(['1s', '90s', '1h30m', '1.5m', '250ms']) } };
    return { replicas: r.chance(0.5) ? r.int(1, 10) : `${r.int(1, 100)}%` };
  });
}

function updateStrategy(r: Rng): Obj {
  if (r.chance(0.2)) return { type: 'OnDelete' };
  const rollingUpdate: Obj = {};
  if (r.chance(0.6)) rollingUpdate['maxUnavailable'] = r.chance(0.5) ? r.int(1, 10) : `${r.int(1, 100)}%`;
  if (r.chance(0.4)) rollingUpdate['partition'] = r.int(0, 5);
  if (r.chance(0.5)) rollingUpdate['podUpdatePolicy'] = r.pick(['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly']);
  if (r.chance(0.3)) rollingUpdate['inPlaceUpdateStrategy'] = { gracePeriodSeconds: r.int(0, 300) };
  if (r.chance(0.3)) rollingUpdate['canary'] = { steps: canarySteps(r) };
  return r.chance(0.5) ? { type: 'RollingUpdate', rollingUpdate } : { rollingUpdate };
}

/** A valid App named `name`: every optional part present or not at random. */
export function validApp(r: Rng, name: string): Obj {
  const labels: Obj = { app: name };
  if (r.chance(0.5)) labels[`tier.example.com/${r.string(r.int(1, 20))}`] = r.string(r.int(0, 63));
  const template: Obj = {
    metadata: { labels, ...(r.chance(0.5) ? { annotations: { note: r.pick(UNICODE), big: r.string(r.int(0, 4096)) } } : {}) },
    spec: { containers: containers(r, r.int(1, 3)), terminationGracePeriodSeconds: r.int(0, 2) },
  };
  const spec: Obj = { replicas: r.int(0, 2), selector: { matchLabels: { app: name } }, template };
  if (r.chance(0.7)) spec['serviceName'] = name;
  if (r.chance(0.5)) spec['podManagementPolicy'] = r.pick(['OrderedReady', 'Parallel']);
  if (r.chance(0.6)) spec['updateStrategy'] = updateStrategy(r);
  if (r.chance(0.3)) spec['minReadySeconds'] = r.int(0, 1);
  if (r.chance(0.3)) spec['revisionHistoryLimit'] = r.int(0, 10);
  if (r.chance(0.3)) spec['ordinals'] = { start: r.int(0, 3) };
  if (r.chance(0.2)) spec['imagePrewarm'] = { enabled: false };
  if (r.chance(0.25)) {
    const storage = r.pick(['1Mi', '1Gi', '512Ki', '1e3', '100M']);
    spec['volumeClaimTemplates'] = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } }];
    if (r.chance(0.5)) spec['persistentVolumeClaimRetentionPolicy'] = { whenDeleted: r.pick(['Retain', 'Delete']), whenScaled: r.pick(['Retain', 'Delete']) };
  }
  return { apiVersion: API_VERSION, kind: APP_KIND, metadata: { name }, spec };
}

function mutated(id: number, category: SpecCase['category'], body: Obj, m: Mutation, r: Rng): SpecCase {
  const { what, field, either, huge } = m.apply(body, r);
  const expect: Expectation = category === 'valid' ? { outcome: 'accepted' } : either ? { outcome: 'either', field } : { outcome: 'refused', field };
  return { id, category, what, body, expect, realizable: !huge };
}

/** `count` cases from the PRNG; names are `<prefix>-<id>` (at most 52 characters as long as the prefix is short). */
export function generateAppCases(r: Rng, count: number, prefix: string): SpecCase[] {
  const cases: SpecCase[] = [];
  for (let id = 0; id < count; id++) {
    const body = validApp(r, `${prefix}-${id}`);
    const roll = r.next();
    if (roll < 0.3) cases.push({ id, category: 'valid', what: 'valid', body, expect: { outcome: 'accepted' }, realizable: true });
    else if (roll < 0.55) cases.push(mutated(id, 'edge', body, r.pick(EDGE_MUTATIONS), r));
    else cases.push(mutated(id, 'invalid', body, r.pick(INVALID_MUTATIONS), r));
  }
  return cases;
}

/**
 * The case as it is created for real: at least one pod for an edge (with none it is Ready whatever its template
 * says), and in-place grace periods and timed canary pauses cut to a second or two, so a rollout ends within the
 * test. Admission saw the case unchanged.
 */
export function forRealCreation(c: SpecCase): Obj {
  const body = structuredClone(c.body);
  const spec = body['spec'] as Obj & { replicas?: number };
  if (c.category === 'edge' && !spec.replicas) spec.replicas = 1;
  const rolling = (spec['updateStrategy'] as Obj | undefined)?.['rollingUpdate'] as
    { inPlaceUpdateStrategy?: { gracePeriodSeconds?: number }; canary?: { steps?: { pause?: { duration?: string } }[] } } | undefined;
  const grace = rolling?.inPlaceUpdateStrategy;
  if (grace?.gracePeriodSeconds !== undefined) grace.gracePeriodSeconds = Math.min(grace.gracePeriodSeconds, 2);
  for (const step of rolling?.canary?.steps ?? []) if (step.pause?.duration !== undefined) step.pause.duration = '1s';
  return body;
}
