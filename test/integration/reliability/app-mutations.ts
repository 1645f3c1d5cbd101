/**
 * Mutations of a valid App for the admission fuzz. An invalid one must be refused with a message naming
 * `field`; an edge one (`either`) may be accepted, and then the worker must reconcile it to Ready or explain why
 * not. `huge` marks a spec that must never be created for real in the sandbox (it asks for too many pods).
 */
import { MAX_REPLICAS } from '../../../src/api/app-spec.ts';
import type { Rng } from './prng.ts';

export type Obj = Record<string, unknown>;

export interface Applied {
  what: string;
  /** A field path the apiserver's message must contain when it refuses the spec. */
  field: string;
  either?: boolean;
  huge?: boolean;
}

export interface Mutation {
  apply(body: Obj, r: Rng): Applied;
}

export const spec = (b: Obj): Obj => b['spec'] as Obj;
export const podSpec = (b: Obj): Obj => (spec(b)['template'] as Obj)['spec'] as Obj;
export const container0 = (b: Obj): Obj => (podSpec(b)['containers'] as Obj[])[0] as Obj;
export const rollingUpdate = (b: Obj): Obj => {
  spec(b)['updateStrategy'] = { type: 'RollingUpdate', rollingUpdate: {} };
  return (spec(b)['updateStrategy'] as Obj)['rollingUpdate'] as Obj;
};
export const claim = (b: Obj, storage: unknown): void => {
  spec(b)['volumeClaimTemplates'] = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } }];
};

/** A mutation that sets one value; `value` may draw from the PRNG. */
export function setter(field: string, at: (b: Obj) => [Obj, string], values: (r: Rng) => unknown, opts: Omit<Applied, 'what' | 'field'> = {}): Mutation {
  return {
    apply(b, r) {
      const [parent, key] = at(b);
      const value = values(r);
      parent[key] = value;
      const shown = JSON.stringify(value) ?? 'undefined';
      return { what: `${field} = ${shown.length > 60 ? `${shown.slice(0, 60)}…` : shown}`, field, ...opts };
    },
  };
}

export const MU = 'spec.updateStrategy.rollingUpdate.maxUnavailable';
export const PARTITION = 'spec.updateStrategy.rollingUpdate.partition';
export const C0 = 'spec.template.spec.containers[0]';
export const STORAGE = 'spec.volumeClaimTemplates[0].spec.resources.requests.storage';

const nested = (depth: number): Obj => {
  let node: Obj = { leaf: 'x' };
  for (let i = 0; i < depth; i++) node = { n: node };
  return node;
};

export const INVALID_MUTATIONS: Mutation[] = [
  {
    apply(b, r) {
      const replicas = r.int(2, 100);
      spec(b)['replicas'] = replicas;
      spec(b)['ordinals'] = { start: 2 ** 31 - r.int(1, replicas - 1) };
      return { what: `highest ordinal past 2^31 - 1 (${replicas} replicas)`, field: 'spec.ordinals.start' };
    },
  },
  setter(
    'spec.replicas',
    (b) => [spec(b), 'replicas'],
    (r) => -r.int(1, 2 ** 31),
  ),
  setter(
    'spec.replicas',
    (b) => [spec(b), 'replicas'],
    (r) => r.pick(['three', '3', true, [], {}, 1.5]),
  ),
  setter(
    'spec.replicas',
    (b) => [spec(b), 'replicas'],
    (r) => r.pick([MAX_REPLICAS + 1, 2 ** 31 - 1, 2 ** 31, 10 ** 12, r.int(MAX_REPLICAS + 1, 2 ** 31)]),
  ),
  setter(
    MU,
    (b) => [rollingUpdate(b), 'maxUnavailable'],
    (r) => r.pick([0, -1, '0%', '101%', '150%', '-5%', '3', 'abc', '', '1000%', 2.5, '50 %']),
  ),
  setter(
    PARTITION,
    (b) => [rollingUpdate(b), 'partition'],
    (r) => r.pick([-1, -(2 ** 31), 'x', '1', 1.5]),
  ),
  setter(
    'spec.podManagementPolicy',
    (b) => [spec(b), 'podManagementPolicy'],
    (r) => r.pick(['Sequential', 'parallel', '', 'OrderedReady ']),
  ),
  setter(
    `${C0}.name`,
    (b) => [container0(b), 'name'],
    (r) => r.pick([r.string(r.int(64, 300)), 'wéb', 'UPPER', 'has space', '-lead', '']),
  ),
  setter(
    `${C0}.image`,
    (b) => [container0(b), 'image'],
    (r) => r.pick(['', 'has space:v1', 'Registry.Example/UP:v1', 'ünï:v1', `r/${r.string(5000)}`]),
  ),
  setter(
    `${C0}.resources.requests.cpu`,
    (b) => [container0(b), 'resources'],
    (r) => ({ requests: { cpu: r.pick(['lots', '1.2.3', '--1', '1 m']) } }),
  ),
  setter(
    `${C0}.ports[0].containerPort`,
    (b) => [container0(b), 'ports'],
    (r) => [{ containerPort: r.pick(['http', '80', null, 1.5]) }],
  ),
  setter(
    'spec.template',
    (b) => [spec(b), 'template'],
    (r) => r.pick(['a string', 42, [], null]),
  ),
  setter(
    'spec.template.spec.containers',
    (b) => [podSpec(b), 'containers'],
    (r) => r.pick([[], {}, 'c', null]),
  ),
  setter(
    'spec.template.spec.restartPolicy',
    (b) => [podSpec(b), 'restartPolicy'],
    (r) => r.pick(['Never', 'OnFailure']),
  ),
  setter(
    'spec.template.spec.activeDeadlineSeconds',
    (b) => [podSpec(b), 'activeDeadlineSeconds'],
    (r) => r.int(1, 1000),
  ),
  setter(
    'spec.selector',
    (b) => [spec(b), 'selector'],
    (r) => r.pick([[], 'app=x', { matchLabels: {} }, null]),
  ),
  setter(
    'spec.template.metadata.labels',
    (b) => [spec(b), 'selector'],
    (r) => ({ matchLabels: { app: `other-${r.string(4)}` } }),
  ),
  setter(
    'spec.bogus',
    (b) => [spec(b), 'bogus'],
    (r) => r.pick([1, 'x', nested(r.int(1, 60))]),
  ),
  setter(
    `${C0}.bogus`,
    (b) => [container0(b), 'bogus'],
    () => true,
  ),
  setter(
    'spec.extra',
    (b) => [spec(b), 'extra'],
    (r) => nested(r.int(50, 90)),
  ),
  setter(
    'metadata.name',
    (b) => [b['metadata'] as Obj, 'name'],
    (r) => r.pick([`a${r.string(r.int(52, 200))}`, 'Upper-Case', 'dot.ted', 'ünicode']),
  ),
  setter(
    'spec.updateStrategy.rollingUpdate.canary.steps[0]',
    (b) => [rollingUpdate(b), 'canary'],
    (r) => ({ steps: [r.pick([{}, { replicas: 1, pause: {} }, { replicas: '0%' }, { replicas: 0 }, { pause: { duration: r.pick(['soon', '-5s', '5']) } }])] }),
  ),
  setter(
    'spec.updateStrategy.rollingUpdate.canary.steps',
    (b) => [rollingUpdate(b), 'canary'],
    (r) => ({
      steps: Array.from({ length: r.int(33, 60) }, (_, i) => ({ replicas: i + 1 })),
    }),
  ),
  setter(
    'spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.gracePeriodSeconds',
    (b) => [rollingUpdate(b), 'inPlaceUpdateStrategy'],
    (r) => ({
      gracePeriodSeconds: r.pick([301, -1, 10 ** 6]),
    }),
  ),
  setter(
    'spec.updateStrategy.rollingUpdate',
    (b) => [spec(b), 'updateStrategy'],
    () => ({ type: 'OnDelete', rollingUpdate: { partition: 1 } }),
  ),
  setter(
    STORAGE,
    (b) => [spec(b), 'volumeClaimTemplates'],
    (r) => [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: r.pick(['lots', '1.5.5Gi', '', 'Gi', '1 Gi', true]) } } } }],
  ),
  setter(
    'spec.volumeClaimTemplates',
    (b) => [spec(b), 'volumeClaimTemplates'],
    () => [{ metadata: { name: 'd' } }, { metadata: { name: 'd' } }],
  ),
  setter(
    'spec.imagePrewarm.enabled',
    (b) => [spec(b), 'imagePrewarm'],
    () => ({}),
  ),
  {
    apply(b, r) {
      const containers = podSpec(b)['containers'] as Obj[];
      const first = containers[0] as Obj;
      containers.push({ ...first, image: r.pick(['nginx:1', 'registry.example.com/x:y']) });
      return { what: 'duplicate container names', field: 'spec.template.spec.containers' };
    },
  },
];
