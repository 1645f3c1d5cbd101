/**
 * What the rendered manifests of deploy/ promise an installer's security review: every container runs with
 * RuntimeDefault seccomp, as non-root, without privilege escalation or capabilities; Redis needs credentials
 * from a Secret (no password in a manifest), caps its memory below its limit with noeviction, keeps protected
 * mode, and runs a digest-pinned image without a service-account token; ebb-system enforces Pod Security
 * `restricted` and only the node daemon runs elsewhere, as system-node-critical and off control-plane nodes;
 * the worker has probes on paths it serves; the watcher has a PodDisruptionBudget and spreads.
 */
import { describe, expect, it } from 'vitest';
import { kustomize, type Manifest } from './kustomize.ts';

const objects = kustomize('deploy');

interface Container {
  name: string;
  image: string;
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }[];
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[] };
    seccompProfile?: { type: string };
  };
  readinessProbe?: { httpGet?: { path: string } };
  livenessProbe?: { httpGet?: { path: string } };
  resources?: { limits?: { memory?: string } };
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: { runAsNonRoot?: boolean; seccompProfile?: { type: string } };
  automountServiceAccountToken?: boolean;
  priorityClassName?: string;
  affinity?: unknown;
  topologySpreadConstraints?: { topologyKey: string; labelSelector: unknown }[];
}
const workloads = objects.filter((o) => ['Deployment', 'StatefulSet', 'DaemonSet'].includes(o.kind));
const specOf = (o: Manifest): PodSpec => (o['spec'] as { template: { spec: PodSpec } }).template.spec;
const workload = (name: string): Manifest => {
  const w = workloads.find((o) => o.metadata.name === name);
  if (!w) throw new Error(`no workload ${name}`);
  return w;
};
const redisConfig = (): Record<string, string> =>
  (objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'ebb-redis')?.['data'] ?? {}) as Record<string, string>;

/** What a container lacks of the hardening every container of deploy/ has. */
function containerProblems(where: string, c: Container, spec: PodSpec): string[] {
  const seccomp = c.securityContext?.seccompProfile?.type ?? spec.securityContext?.seccompProfile?.type;
  const checks: [boolean, string][] = [
    [seccomp === 'RuntimeDefault', `seccomp ${seccomp ?? 'unset'}`],
    [spec.securityContext?.runAsNonRoot === true, 'runAsNonRoot unset'],
    [c.securityContext?.allowPrivilegeEscalation === false, 'privilege escalation allowed'],
    [JSON.stringify(c.securityContext?.capabilities?.drop) === '["ALL"]', 'capabilities not dropped'],
    [c.securityContext?.readOnlyRootFilesystem === true, 'writable root filesystem'],
  ];
  return checks.filter(([ok]) => !ok).map(([, problem]) => `${where}: ${problem}`);
}

describe('the rendered manifests of deploy/', () => {
  it('run every container with RuntimeDefault seccomp, as non-root, with no privilege escalation and no capabilities', () => {
    expect(workloads.map((w) => w.metadata.name).sort()).toEqual(['ebb-daemon', 'ebb-redis', 'ebb-watcher', 'ebb-worker']);
    const problems = workloads.flatMap((w) => {
      const spec = specOf(w);
      return [...spec.containers, ...(spec.initContainers ?? [])].flatMap((c) => containerProblems(`${w.metadata.name}/${c.name}`, c, spec));
    });
    expect(problems).toEqual([]);
  });

  it('give Redis and its clients the password from the Secret only, never in clear', () => {
    const secretRefs = workloads.flatMap((w) =>
      specOf(w).containers.flatMap((c) => (c.env ?? []).filter((e) => /PASSWORD|REDIS_URL/.test(e.name)).map((e) => ({ workload: w.metadata.name, ...e }))),
    );
    for (const e of secretRefs) {
      if (e.name.endsWith('PASSWORD')) expect(e.valueFrom?.secretKeyRef, `${e.workload} ${e.name}`).toEqual({ name: 'ebb-redis', key: 'password' });
      else expect(new URL(e.value ?? '').password, `${e.workload} ${e.name} holds no password`).toBe('');
    }
    expect(secretRefs.map((e) => `${e.workload} ${e.name}`).sort()).toEqual([
      'ebb-redis REDIS_PASSWORD',
      'ebb-watcher EBB_REDIS_PASSWORD',
      'ebb-watcher EBB_REDIS_URL',
      'ebb-worker EBB_REDIS_PASSWORD',
      'ebb-worker EBB_REDIS_URL',
    ]);
    expect(objects.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name)).toEqual([]);
    // Its clients authenticate as the ACL user; the default user is off.
    const acl = redisConfig()['users.acl'] ?? '';
    expect(acl).toMatch(/^user default off resetpass /m);
    expect(acl).toMatch(/^user ebb on >@PASSWORD@ resetkeys ~\{ebb\}\* /m);
    const url = workloads.flatMap((w) => specOf(w).containers.flatMap((c) => c.env ?? [])).find((e) => e.name === 'EBB_REDIS_URL');
    expect(new URL(url?.value ?? '').username).toBe('ebb');
  });

  it('cap Redis below its memory limit with noeviction, keep protected mode, pin the image, mount no token', () => {
    const conf: Record<string, string> = Object.fromEntries(
      (redisConfig()['redis.conf'] ?? '')
        .split('\n')
        .filter((l) => l.trim() && !l.trim().startsWith('#'))
        .map((l): [string, string] => [l.trim().split(/\s+/)[0] ?? '', l.trim().split(/\s+/).slice(1).join(' ')]),
    );
    const spec = specOf(workload('ebb-redis'));
    const [redis] = spec.containers;
    const limit = /^(\d+)Mi$/.exec(redis?.resources?.limits?.memory ?? '');
    const maxmemory = /^(\d+)mb$/.exec(conf['maxmemory'] ?? '');
    expect(limit && maxmemory, 'a limit in Mi and a maxmemory in mb').toBeTruthy();
    expect(Number(maxmemory?.[1])).toBeLessThanOrEqual(0.75 * Number(limit?.[1]));
    expect(conf).toMatchObject({ 'maxmemory-policy': 'noeviction', 'protected-mode': 'yes' });
    expect(redis?.image).toMatch(/^redis:[\w.-]+@sha256:[0-9a-f]{64}$/);
    expect(spec.automountServiceAccountToken).toBe(false);
  });

  it('enforce Pod Security restricted in ebb-system; only the daemon runs elsewhere, node-critical and off the control plane', () => {
    const labels = (ns: string): Record<string, string> => objects.find((o) => o.kind === 'Namespace' && o.metadata.name === ns)?.metadata.labels ?? {};
    expect(labels('ebb-system')).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'restricted' });
    expect(workloads.filter((w) => w.metadata.namespace !== 'ebb-system').map((w) => `${w.metadata.namespace}/${w.metadata.name}`)).toEqual([
      'ebb-node/ebb-daemon',
    ]);
    const daemon = specOf(workload('ebb-daemon'));
    expect(daemon.priorityClassName).toBe('system-node-critical');
    expect(JSON.stringify(daemon.affinity)).toContain('{"key":"node-role.kubernetes.io/control-plane","operator":"DoesNotExist"}');
  });

  it('probe the worker on the paths it serves; spread the watcher and bound its disruptions', () => {
    const [worker] = specOf(workload('ebb-worker')).containers;
    expect([worker?.readinessProbe?.httpGet?.path, worker?.livenessProbe?.httpGet?.path]).toEqual(['/readyz', '/healthz']);
    const watcher = workload('ebb-watcher');
    const selector = (watcher['spec'] as { selector: unknown }).selector;
    expect(specOf(watcher).topologySpreadConstraints?.map((t) => t.topologyKey)).toContain('kubernetes.io/hostname');
    const pdb = objects.find((o) => o.kind === 'PodDisruptionBudget');
    expect(pdb?.metadata.namespace).toBe('ebb-system');
    expect((pdb?.['spec'] as { selector: unknown }).selector).toEqual(selector);
  });
});
