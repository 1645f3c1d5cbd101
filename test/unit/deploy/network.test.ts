/**
 * Who may connect to which port of ebb's pods once deploy/ is installed: the NetworkPolicies, evaluated against
 * the labels and ports of the pods the rendered workloads make, and against pods of other namespaces (a
 * tenant's, the monitoring namespace's, KEDA's). Redis admits only the watcher and the workers, the scaler only
 * KEDA's namespace, /metrics only the monitoring namespace (both are install settings), and every pod of ebb's
 * namespaces is under a default deny. Egress the other way: every pod may ask the cluster's DNS; the watcher, the
 * workers and the daemon may reach the apiserver (its address and port are install settings); the watcher and
 * the workers may reach Redis; nothing else, by default, from any of them: not the cloud's metadata address, a
 * kubelet, the monitoring namespace's Prometheus, a tenant's pod nor an address outside the cluster. What the
 * worker may reach besides is its own NetworkPolicy in the settings.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { kustomize, type Manifest } from './kustomize.ts';
import { egressOf, ingressOf, workloadPods, type Destination, type Pod } from './network.ts';

const objects = kustomize('deploy');
const settings = (
  parseAllDocuments(readFileSync(new URL('../../../deploy/settings.yaml', import.meta.url), 'utf8'))[0]?.toJS() as { data: Record<string, string> }
).data;
const MONITORING = settings['monitoringNamespace'] ?? '';
const KEDA = settings['kedaNamespace'] ?? '';
const API_SERVER_CIDR = String(settings['apiServerCIDR']);
const API_SERVER_PORT = Number(settings['apiServerPort']);

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

describe("deploy/'s egress NetworkPolicies", () => {
  const egress = egressOf(objects);
  const dns: Pod = { ...pod('coredns', 'kube-system', { 'k8s-app': 'kube-dns' }), ip: '10.244.0.10' };
  const apiserver: Destination = { name: 'apiserver', ip: API_SERVER_CIDR.endsWith('/0') ? '10.0.0.12' : (API_SERVER_CIDR.split('/')[0] ?? '') };
  const redis = ebb['ebb-redis'];
  if (!redis) throw new Error('no Redis pod');
  /** What a tenant's check or notification could aim at, and the port it would use. */
  const elsewhere: [Destination, number][] = [
    [{ name: 'cloud metadata', ip: '169.254.169.254' }, 80],
    [{ name: "a node's kubelet (read-only port)", ip: '10.0.0.12' }, 10255],
    [{ name: "a node's kubelet", ip: '10.0.0.12' }, 10250],
    [{ ...pod('prometheus', MONITORING, { 'app.kubernetes.io/name': 'prometheus' }), ip: '10.244.1.5', ports: { web: 9090 } }, 9090],
    [{ ...pod('alertmanager', MONITORING, { 'app.kubernetes.io/name': 'alertmanager' }), ip: '10.244.1.6' }, 9093],
    [{ ...pod('api', 'tenant-b', { app: 'api' }), ip: '10.244.2.7' }, 8080],
    // A tenant's pod that copies the DNS pods' labels is not the cluster's DNS.
    [{ ...pod('fake-dns', 'tenant-b', { 'k8s-app': 'kube-dns' }), ip: '10.244.2.8' }, 53],
    [{ name: 'a host on the internet', ip: '203.0.113.10' }, 443],
    [{ name: 'a host on the internet', ip: '203.0.113.10' }, 80],
  ];
  const reach = (from: Pod): string[] => elsewhere.filter(([to, port]) => egress(from, to, port)).map(([to, port]) => `${to.name}:${port}`);

  it("admit DNS from every pod of ebb, over UDP and TCP, to kube-system's DNS pods only", () => {
    for (const from of Object.values(ebb)) {
      expect(egress(from, dns, 53, 'UDP'), from.name).toBe(true);
      expect(egress(from, dns, 53, 'TCP'), from.name).toBe(true);
      expect(egress(from, dns, 9153), `${from.name}: DNS pods' other ports`).toBe(false);
    }
  });

  it('admit the apiserver, at its address and port of the settings, from the watcher, the workers and the daemon only', () => {
    const reachers = Object.values(ebb)
      .filter((p) => egress(p, apiserver, API_SERVER_PORT))
      .map((p) => p.name);
    expect(reachers.sort()).toEqual(['ebb-node/ebb-daemon', 'ebb-system/ebb-watcher', 'ebb-system/ebb-worker']);
  });

  it('admit Redis from the watcher and the workers only', () => {
    const port = redis.ports['redis'] ?? 0;
    const reachers = Object.values(ebb)
      .filter((p) => p !== redis && egress(p, redis, port))
      .map((p) => p.name);
    expect(reachers.sort()).toEqual(['ebb-system/ebb-watcher', 'ebb-system/ebb-worker']);
    expect(egress(ebb['ebb-worker'] as Pod, redis, 12_345), "Redis's other ports").toBe(false);
  });

  it('refuse every other destination from every pod of ebb: metadata, kubelets, Prometheus, tenants, the internet', () => {
    for (const from of Object.values(ebb)) expect(reach(from), from.name).toEqual([]);
  });

  it('take the apiserver address and port from the install settings', () => {
    const rules = objects
      .filter((o) => o.kind === 'NetworkPolicy' && ['ebb-apiserver', 'ebb-daemon-egress'].includes(o.metadata.name))
      .map((o) => (o['spec'] as { egress: unknown[] }).egress[0]);
    expect(rules).toHaveLength(2);
    for (const r of rules) expect(r).toEqual({ to: [{ ipBlock: { cidr: API_SERVER_CIDR } }], ports: [{ port: API_SERVER_PORT, protocol: 'TCP' }] });
  });

  it('let the worker reach what its settings policy allows, and only the worker', () => {
    const policy = objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'ebb-worker-egress');
    expect((policy?.['spec'] as { egress: unknown[] }).egress, 'none by default').toEqual([]);
    // An installer's allowlist: the monitoring namespace's Prometheus, and HTTPS outside private and link-local ranges.
    const allowlist = structuredClone(objects).map((o) =>
      o.kind === 'NetworkPolicy' && o.metadata.name === 'ebb-worker-egress'
        ? {
            ...o,
            spec: {
              ...(o['spec'] as object),
              egress: [
                {
                  to: [
                    {
                      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': MONITORING } },
                      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
                    },
                  ],
                  ports: [{ port: 9090 }],
                },
                {
                  to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16'] } }],
                  ports: [{ port: 443 }],
                },
              ],
            },
          }
        : o,
    );
    const withAllowlist = egressOf(allowlist);
    const worker = ebb['ebb-worker'] as Pod;
    expect(elsewhere.filter(([to, port]) => withAllowlist(worker, to, port)).map(([to, port]) => `${to.name}:${port}`)).toEqual([
      `${MONITORING}/prometheus:9090`,
      'a host on the internet:443',
    ]);
    for (const other of ['ebb-watcher', 'ebb-daemon', 'ebb-redis'])
      expect(
        elsewhere.filter(([to, port]) => withAllowlist(ebb[other] as Pod, to, port)),
        other,
      ).toEqual([]);
  });
});
