/**
 * Who may connect to which port of ebb's pods once deploy/ is installed: the NetworkPolicies, evaluated against
 * the labels and ports of the pods the rendered workloads make, and against pods of other namespaces (a
 * tenant's, the monitoring namespace's, KEDA's). Redis admits only the watcher and the workers, the scaler only
 * KEDA's namespace, /metrics only the monitoring namespace (both are install settings), and every pod of ebb's
 * namespaces is under a default deny.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kustomize, type Manifest } from './kustomize.ts';
import { ingressOf, workloadPods, type Pod } from './network.ts';

const objects = kustomize('deploy');
const settings = (parse(readFileSync(new URL('../../../deploy/settings.yaml', import.meta.url), 'utf8')) as { data: Record<string, string> }).data;
const MONITORING = settings['monitoringNamespace'] ?? '';
const KEDA = settings['kedaNamespace'] ?? '';

const ebb = Object.fromEntries(workloadPods(objects).map((p) => [p.labels['app.kubernetes.io/name'] ?? p.name, p]));
const pod = (name: string, namespace: string, labels: Record<string, string> = {}): Pod => ({ name: `${namespace}/${name}`, namespace, labels, ports: {} });
/** Every client: ebb's own pods, and pods of namespaces that are not ebb's. */
const clients: Pod[] = [
  ...Object.values(ebb),
  pod('tenant-app', 'tenant-a', { app: 'web' }),
  // A tenant's pod that copies ebb's labels gains nothing: peers in ebb's namespace are matched by namespace too.
  pod('impostor', 'tenant-b', { 'app.kubernetes.io/name': 'ebb-worker' }),
  pod('debug', 'ebb-system', { app: 'debug' }),
  pod('prometheus', MONITORING, { 'app.kubernetes.io/name': 'prometheus' }),
  pod('keda-operator', KEDA, { app: 'keda-operator' }),
];
const allowed = ingressOf(objects);

/** The clients that may connect to `target`'s port `portName`. */
function reachers(target: string, portName: string): string[] {
  const to = ebb[target];
  const port = to?.ports[portName];
  if (!to || port === undefined) throw new Error(`no pod ${target} with a port ${portName}`);
  return clients.filter((c) => c !== to && allowed(c, to, port)).map((c) => c.name);
}

describe("deploy/'s NetworkPolicies", () => {
  it('knows every workload', () => {
    expect(Object.keys(ebb).sort()).toEqual(['ebb-daemon', 'ebb-redis', 'ebb-watcher', 'ebb-worker']);
  });

  it('admit Redis connections from the watcher and the workers only', () => {
    expect(reachers('ebb-redis', 'redis')).toEqual(['ebb-system/ebb-watcher', 'ebb-system/ebb-worker']);
  });

  it("admit the watcher's KEDA scaler port from KEDA's namespace only", () => {
    expect(reachers('ebb-watcher', 'scaler')).toEqual([`${KEDA}/keda-operator`]);
  });

  it('admit /metrics of every ebb process from the monitoring namespace only', () => {
    for (const target of ['ebb-watcher', 'ebb-worker', 'ebb-daemon']) expect(reachers(target, 'http'), target).toEqual([`${MONITORING}/prometheus`]);
  });

  it('deny every other port and pod: each pod of ebb is selected by a default deny of its namespace', () => {
    for (const to of Object.values(ebb)) {
      const denyAll = objects.find(
        (o: Manifest) =>
          o.kind === 'NetworkPolicy' &&
          o.metadata.namespace === to.namespace &&
          JSON.stringify((o['spec'] as { podSelector: unknown }).podSelector) === '{}' &&
          (o['spec'] as { ingress?: unknown }).ingress === undefined,
      );
      expect(denyAll, `a default deny in ${to.namespace}`).toBeDefined();
      const other = 12_345;
      expect(
        clients.filter((c) => allowed(c, to, other)).map((c) => c.name),
        `${to.name} port ${other}`,
      ).toEqual([]);
    }
  });

  it('take the monitoring and KEDA namespaces from the install settings', () => {
    const peersOf = (name: string): unknown =>
      objects
        .filter((o) => o.kind === 'NetworkPolicy' && o.metadata.name === name)
        .map((o) => (o['spec'] as { ingress: { from: unknown }[] }).ingress[0]?.from);
    expect(peersOf('ebb-metrics')).toEqual([[{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': MONITORING } } }]]);
    expect(peersOf('ebb-daemon-metrics')).toEqual([[{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': MONITORING } } }]]);
    expect(peersOf('ebb-scaler')).toEqual([[{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': KEDA } } }]]);
    // The settings are local configuration: kustomize does not output them.
    expect(objects.filter((o) => o.metadata.name === 'ebb-install-settings')).toEqual([]);
  });
});
