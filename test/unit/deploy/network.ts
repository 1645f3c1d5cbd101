/**
 * NetworkPolicy ingress evaluated as the API defines it, for the rendered manifests: which pod (namespace and
 * labels) may open a connection to which port of another pod. A pod no policy selects admits everything; a pod
 * some Ingress policy selects admits what one rule of one of those policies allows (a rule with no `from`
 * admits any peer, with no `ports` any port; a named port is the target container's port of that name).
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
}

interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: unknown;
}

interface Policy {
  namespace: string;
  podSelector: LabelSelector;
  policyTypes?: string[];
  ingress?: { from?: Peer[]; ports?: { port?: number | string; protocol?: string }[] }[];
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

/** Evaluates the NetworkPolicies of `objects`; namespaces carry the labels of their Namespace object, if any. */
export function ingressOf(objects: readonly Manifest[]): (from: Pod, to: Pod, port: number) => boolean {
  const policies: Policy[] = objects
    .filter((o) => o.kind === 'NetworkPolicy')
    .map((o) => ({ namespace: o.metadata.namespace ?? '', ...(o['spec'] as Omit<Policy, 'namespace'>) }));
  const namespaceLabels = (ns: string): Record<string, string> => ({
    ...(objects.find((o) => o.kind === 'Namespace' && o.metadata.name === ns)?.metadata.labels ?? {}),
    'kubernetes.io/metadata.name': ns,
  });
  const peerMatches = (peer: Peer, from: Pod, policyNamespace: string): boolean => {
    if (peer.ipBlock !== undefined) throw new Error('ipBlock peers: teach test/unit/deploy/network.ts to evaluate them');
    const namespaceOk = peer.namespaceSelector ? matches(peer.namespaceSelector, namespaceLabels(from.namespace)) : from.namespace === policyNamespace;
    return namespaceOk && (peer.podSelector === undefined || matches(peer.podSelector, from.labels));
  };
  const portMatches = (spec: { port?: number | string; protocol?: string }, to: Pod, port: number): boolean =>
    (spec.protocol ?? 'TCP') === 'TCP' && (spec.port === undefined || (typeof spec.port === 'number' ? spec.port === port : to.ports[spec.port] === port));

  return (from, to, port) => {
    const selecting = policies.filter(
      (p) => p.namespace === to.namespace && (p.policyTypes ?? ['Ingress']).includes('Ingress') && matches(p.podSelector, to.labels),
    );
    if (selecting.length === 0) return true;
    return selecting.some((p) =>
      (p.ingress ?? []).some(
        (rule) =>
          (!rule.from?.length || rule.from.some((peer) => peerMatches(peer, from, p.namespace))) &&
          (!rule.ports?.length || rule.ports.some((spec) => portMatches(spec, to, port))),
      ),
    );
  };
}
