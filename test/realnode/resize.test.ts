/**
 * In-place resize on the real kubelet through `pods/resize`: cpu up with a memory limit increase, then cpu
 * down, with no restart; the new values show in the pod's status and in the container's cgroup v1 files.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../src/api/app-spec.ts';
import type { Pod } from '../../src/kube/types.ts';
import { createApp, isSettled, patchApp, settled, uniqueName, until, useController, type Snapshot } from '../integration/app/harness.ts';
import { gateOf, isAnnotated } from '../integration/app/pod-history.ts';
import { containerStatus, deleteApp, mainContainer, realTemplate } from './support.ts';

const ctl = useController('rn-rs');

const CGROUP_ROOT = '/ebb-real-node-0';

interface Resources {
  requests: { cpu: string; memory: string };
  limits: { cpu: string; memory: string };
}
const res = (cpuRequest: string, cpuLimit: string, memoryLimit: string): Resources => ({
  requests: { cpu: cpuRequest, memory: '32Mi' },
  limits: { cpu: cpuLimit, memory: memoryLimit },
});
const template = (name: string, r: Resources): AppSpec['template'] => realTemplate(name, [mainContainer('v1', { resources: r })]);

/** The container's directory in a cgroup v1 hierarchy: <root>/kubepods/burstable/pod<uid>/<container id>. */
function cgroupDir(hierarchy: string, pod: Pod): string {
  const id = (containerStatus(pod, 'main')?.containerID ?? '').replace(/^containerd:\/\//, '');
  return join('/sys/fs/cgroup', hierarchy, CGROUP_ROOT, 'kubepods', 'burstable', `pod${pod.metadata.uid ?? ''}`, id);
}
const cgroupValue = async (hierarchy: string, file: string, pod: Pod): Promise<number> =>
  Number((await readFile(join(cgroupDir(hierarchy, pod), file), 'utf8')).trim());

/** Settled at `generation` with `r` in the container's status (the kubelet applied it). */
const resized = (generation: number, r: Resources) => (s: Snapshot) =>
  s.app.metadata.generation === generation &&
  isSettled(s) &&
  s.pods.every((p) => {
    const st = containerStatus(p, 'main')?.resources as Resources | undefined;
    return (
      !isAnnotated(p) &&
      gateOf(p)?.status === 'True' &&
      st?.requests.cpu === r.requests.cpu &&
      st.limits.cpu === r.limits.cpu &&
      st.limits.memory === r.limits.memory
    );
  });

describe('resize on a real node', () => {
  it('cpu up with more memory, then cpu down: no restart, status and cgroups follow', async () => {
    const name = uniqueName('rnrs');
    const start = res('100m', '500m', '64Mi');
    await createApp(ctl.ns, name, {
      replicas: 1,
      template: template(name, start),
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
    });
    const before = await settled(ctl.ns, name, undefined, 90_000);
    const pod0 = before.pods[0] as Pod;
    expect(await cgroupValue('cpu', 'cpu.shares', pod0)).toBe(102);
    expect(await cgroupValue('cpu', 'cpu.cfs_quota_us', pod0)).toBe(50_000);
    expect(await cgroupValue('memory', 'memory.limit_in_bytes', pod0)).toBe(64 * 2 ** 20);

    const up = res('200m', '1', '96Mi');
    await patchApp(ctl.ns, name, { template: template(name, up) });
    const grown = await until(ctl.ns, name, resized(2, up), { timeoutMs: 60_000, what: `App ${name} resized up` });
    const pod1 = grown.pods[0] as Pod;
    expect(pod1.metadata.uid).toBe(pod0.metadata.uid);
    expect(containerStatus(pod1, 'main')).toMatchObject({ restartCount: 0, containerID: containerStatus(pod0, 'main')?.containerID });
    expect(await cgroupValue('cpu', 'cpu.shares', pod1)).toBe(204);
    expect(await cgroupValue('cpu', 'cpu.cfs_quota_us', pod1)).toBe(100_000);
    expect(await cgroupValue('memory', 'memory.limit_in_bytes', pod1)).toBe(96 * 2 ** 20);

    const down = res('50m', '250m', '96Mi');
    await patchApp(ctl.ns, name, { template: template(name, down) });
    const shrunk = await until(ctl.ns, name, resized(3, down), { timeoutMs: 60_000, what: `App ${name} resized down` });
    const pod2 = shrunk.pods[0] as Pod;
    expect(containerStatus(pod2, 'main')).toMatchObject({ restartCount: 0, containerID: containerStatus(pod0, 'main')?.containerID });
    expect(await cgroupValue('cpu', 'cpu.shares', pod2)).toBe(51);
    expect(await cgroupValue('cpu', 'cpu.cfs_quota_us', pod2)).toBe(25_000);
    await deleteApp(ctl.ns, name);
  });
});
