/**
 * NetworkPolicies evaluated as the API defines them, for the rendered manifests. Ingress: which pod (namespace
 * and labels) may open a connection to which port of another pod. A pod no policy selects admits everything; a
 * pod some Ingress policy selects admits what one rule of one of those policies allows (a rule with no `from`
 * admits any peer, with no `ports` any port; a named port is the target container's port of that name).
 * Egress, the same from the other side: where a pod may connect, to another pod or to an IPv4 address (an
 * `ipBlock` peer: its CIDR less its exceptions; a pod with an address counts as that address too, since
 * whether a plugin matches pod addresses by ipBlock is the plugin's choice).
 */
import type { Manifest } from './kustomize.ts';

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

export interface Pod {
  /** For messages: `ebb-system/ebb-watcher`. */
  name: string;
  namespace: string;
  labels: Record<string, string>;
  /** Container ports by name. */
  ports: Record<string, number>;
  /** Its IPv4 address, when an ipBlock should see it. */
  ip?: string;
}

/** Where a connection goes: a pod, or an address outside the cluster's pods. */
export type Destination = Pod | { name: string; ip: string };

export type Protocol = 'TCP' | 'UDP';

interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

interface PortSpec {
  port?: number | string;
  endPort?: number;
  protocol?: string;
}

interface Policy {
  namespace: string;
  podSelector: LabelSelector;
  policyTypes?: string[];
  ingress?: { from?: Peer[]; ports?: PortSpec[] }[];
  egress?: { to?: Peer[]; ports?: PortSpec[] }[];
}

const ipv4 = (ip: string): number => {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new Error(`not an IPv4 address: ${ip}`);
  return parts.reduce((n, p) => n * 256 + p, 0);
};

/** Whether `ip` is inside `cidr` (IPv4). */
export function inCidr(ip: string, cidr: string): boolean {
  const [base = '', bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(ip) / size) === Math.floor(ipv4(base) / size);
}

/** An absent selector selects nothing; an empty one everything. */
export function matches(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (selector === undefined) return false;
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  return (
    byLabels &&
    (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
      const has = key in labels;
      if (operator === 'Exists') return has;
      if (operator === 'DoesNotExist') return !has;
      if (operator === 'In') return has && values.includes(labels[key] ?? '');
      return !has || !values.includes(labels[key] ?? '');
    })
  );
}

/** The pods each workload of the manifests makes: its template's labels and container ports. */
export function workloadPods(objects: readonly Manifest[]): Pod[] {
  return objects
    .filter((o) => ['Deployment', 'StatefulSet', 'DaemonSet'].includes(o.kind))
    .map((o) => {
      const template = (
        o['spec'] as {
          template: { metadata: { labels: Record<string, string> }; spec: { containers: { ports?: { name?: string; containerPort: number }[] }[] } };
        }
      ).template;
      const ports = template.spec.containers.flatMap((c) => c.ports ?? []).filter((p) => p.name !== undefined);
      return {
        name: `${o.metadata.namespace ?? ''}/${o.metadata.name}`,
        namespace: o.metadata.namespace ?? '',
        labels: template.metadata.labels,
        ports: Object.fromEntries(ports.map((p) => [p.name ?? '', p.containerPort])),
      };
    });
}

function policiesOf(objects: readonly Manifest[]): Policy[] {
  return objects.filter((o) => o.kind === 'NetworkPolicy').map((o) => ({ namespace: o.metadata.namespace ?? '', ...(o['spec'] as Omit<Policy, 'namespace'>) }));
}

/** Whether `peer` of a policy in `policyNamespace` names `pod` (by selectors or, with an address, by ipBlock). */
function peerMatcher(objects: readonly Manifest[]): (peer: Peer, pod: Destination, policyNamespace: string) => boolean {
  const namespaceLabels = (ns: string): Record<string, string> => ({
    ...(objects.find((o) => o.kind === 'Namespace' && o.metadata.name === ns)?.metadata.labels ?? {}),
    'kubernetes.io/metadata.name': ns,
  });
  return (peer, pod, policyNamespace) => {
    if (peer.ipBlock !== undefined) {
      const { cidr, except = [] } = peer.ipBlock;
      return pod.ip !== undefined && inCidr(pod.ip, cidr) && !except.some((e) => inCidr(pod.ip ?? '', e));
    }
    if (!('namespace' in pod)) return false;
    const namespaceOk = peer.namespaceSelector ? matches(peer.namespaceSelector, namespaceLabels(pod.namespace)) : pod.namespace === policyNamespace;
    return namespaceOk && (peer.podSelector === undefined || matches(peer.podSelector, pod.labels));
  };
}

const portMatches = (spec: PortSpec, to: Destination, port: number, protocol: Protocol): boolean => {
  if ((spec.protocol ?? 'TCP') !== protocol) return false;
  if (spec.port === undefined) return true;
  if (typeof spec.port === 'string') return 'ports' in to && to.ports[spec.port] === port;
  return spec.endPort === undefined ? spec.port === port : spec.port <= port && port <= spec.endPort;
};

/** Evaluates the NetworkPolicies of `objects`; namespaces carry the labels of their Namespace object, if any. */
export function ingressOf(objects: readonly Manifest[]): (from: Pod, to: Pod, port: number) => boolean {
  const policies = policiesOf(objects);
  const peerMatches = peerMatcher(objects);
  return (from, to, port) => {
    const selecting = policies.filter(
      (p) => p.namespace === to.namespace && (p.policyTypes ?? ['Ingress']).includes('Ingress') && matches(p.podSelector, to.labels),
    );
    if (selecting.length === 0) return true;
    return selecting.some((p) =>
      (p.ingress ?? []).some(
        (rule) =>
          (!rule.from?.length || rule.from.some((peer) => peerMatches(peer, from, p.namespace))) &&
          (!rule.ports?.length || rule.ports.some((spec) => portMatches(spec, to, port, 'TCP'))),
      ),
    );
  };
}

/** Whether `from` may open a connection to `to`'s `port` under the egress policies of `objects`. */
export function egressOf(objects: readonly Manifest[]): (from: Pod, to: Destination, port: number, protocol?: Protocol) => boolean {
  const policies = policiesOf(objects);
  const peerMatches = peerMatcher(objects);
  return (from, to, port, protocol = 'TCP') => {
    const selecting = policies.filter(
      (p) =>
        p.namespace === from.namespace &&
        (p.policyTypes ?? (p.egress ? ['Ingress', 'Egress'] : ['Ingress'])).includes('Egress') &&
        matches(p.podSelector, from.labels),
    );
    if (selecting.length === 0) return true;
    return selecting.some((p) =>
      (p.egress ?? []).some(
        (rule) =>
          (!rule.to?.length || rule.to.some((peer) => peerMatches(peer, to, p.namespace))) &&
          (!rule.ports?.length || rule.ports.some((spec) => portMatches(spec, to, port, protocol))),
      ),
    );
  };
}
