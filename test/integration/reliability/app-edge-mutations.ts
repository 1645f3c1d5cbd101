/**
 * Edge mutations of a valid App for the admission fuzz: values at the bounds, or that the CRD schema cannot
 * judge (pod-level validation, claim sizes). Either verdict is fine; an accepted one is reconciled for real.
 */
import { MAX_REPLICAS } from '../../../src/api/app-spec.ts';
import { C0, MU, PARTITION, STORAGE, claim, container0, podSpec, rollingUpdate, setter, spec, type Mutation, type Obj } from './app-mutations.ts';

export const EDGE_MUTATIONS: Mutation[] = [
  setter(
    'spec.replicas',
    (b) => [spec(b), 'replicas'],
    (r) => r.pick([MAX_REPLICAS, r.int(100, MAX_REPLICAS)]),
    { either: true, huge: true },
  ),
  setter(
    'spec.ordinals.start',
    (b) => [spec(b), 'ordinals'],
    (r) => ({ start: r.pick([2 ** 31 - 1, 2 ** 31 - 2, 10 ** 9]) }),
    { either: true },
  ),
  setter(
    MU,
    (b) => [rollingUpdate(b), 'maxUnavailable'],
    (r) => r.pick(['100%', '1%', 1, 2 ** 31 - 1, '99%']),
    { either: true },
  ),
  setter(
    PARTITION,
    (b) => [rollingUpdate(b), 'partition'],
    (r) => r.pick([0, 2 ** 31 - 1, 1000]),
    { either: true },
  ),
  setter(
    'spec.updateStrategy.rollingUpdate.canary.steps',
    (b) => [rollingUpdate(b), 'canary'],
    (r) => ({
      steps: r.pick([
        [{ replicas: '50%' }, { replicas: 1 }],
        [{ replicas: 3 }, { pause: {} }, { replicas: 1 }],
        [{ replicas: '100%' }, { replicas: '10%' }],
      ]),
    }),
    { either: true },
  ),
  setter(
    `${C0}.env[0].name`,
    (b) => [container0(b), 'env'],
    (r) => [{ name: r.pick(['has space', '', '1=2', 'é']), value: 'x' }],
    { either: true },
  ),
  setter(
    `${C0}.resources`,
    (b) => [container0(b), 'resources'],
    () => ({ requests: { cpu: '2' }, limits: { cpu: '1' } }),
    { either: true },
  ),
  setter(
    `${C0}.ports[0].containerPort`,
    (b) => [container0(b), 'ports'],
    (r) => [{ containerPort: r.pick([0, 70000, -1]) }],
    { either: true },
  ),
  setter(
    `${C0}.volumeMounts[0].name`,
    (b) => [container0(b), 'volumeMounts'],
    () => [{ name: 'nowhere', mountPath: '/x' }],
    { either: true },
  ),
  {
    apply(b, r) {
      const labels = ((spec(b)['template'] as Obj)['metadata'] as Obj)['labels'] as Obj;
      const key = r.pick(['ünï', 'a/b/c', 'x'.repeat(70), 'ok']);
      labels[key] = r.pick(['v', 'x'.repeat(64), 'ünï', '-lead']);
      const shown = (v: unknown): string => (JSON.stringify(v) ?? '').slice(0, 20);
      return { what: `template label ${shown(key)}=${shown(labels[key])}`, field: 'spec.template.metadata.labels', either: true };
    },
  },
  setter(
    'spec.template.metadata.annotations',
    (b) => [(spec(b)['template'] as Obj)['metadata'] as Obj, 'annotations'],
    (r) => ({
      [r.pick(['ünï', 'ok', 'a/b/c'])]: r.string(r.int(10_000, 200_000), 'ab 🌊é'),
    }),
    { either: true },
  ),
  setter(
    'spec.template.spec.terminationGracePeriodSeconds',
    (b) => [podSpec(b), 'terminationGracePeriodSeconds'],
    (r) => r.pick([-1, 0, 2 ** 40]),
    { either: true },
  ),
  setter(
    'spec.template.spec.affinity',
    (b) => [podSpec(b), 'affinity'],
    (r) => ({
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: Array.from({ length: r.int(1, 40) }, (_, i) => ({
          weight: r.int(1, 100),
          preference: { matchExpressions: [{ key: `k${i}`, operator: 'In', values: [r.string(5)] }] },
        })),
      },
    }),
    { either: true },
  ),
  {
    apply(b, r) {
      claim(b, r.pick(['-1Gi', '0', '1Zi', '0.0001m', '1e30']));
      const requests = (((spec(b)['volumeClaimTemplates'] as Obj[])[0] as Obj)['spec'] as Obj)['resources'] as Obj;
      return { what: `claim storage ${JSON.stringify((requests['requests'] as Obj)['storage'])}`, field: STORAGE, either: true };
    },
  },
];
