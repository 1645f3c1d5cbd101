import { describe, expect, it } from 'vitest';
import { LEDGER_PATH, LedgerWriter, applyHostChanges } from './host-apply.ts';
import type { HostOps } from './host-ops.ts';
import type { HostChange } from './host-plan.ts';
import { revertHostChanges } from './host-revert.ts';
import { cleanStaleHostChanges } from './real-nodes.ts';
import { createLogger } from '../../../src/common/log.ts';

const done = <T>(value: T): Promise<T> => Promise.resolve(value);

/** An in-memory host: sysctls, paths, links and a log of ip commands and kills. */
function fakeHost(): HostOps & { sysctls: Map<string, string>; paths: Set<string>; calls: string[] } {
  const sysctls = new Map([['kernel.panic', '1']]);
  const paths = new Set<string>(['/sys/fs/cgroup/cpuset/cpuset.cpus', '/sys/fs/cgroup/cpuset/cpuset.mems']);
  const files = new Map<string, string>();
  const calls: string[] = [];
  const ip = (args: string[]): Promise<void> => {
    calls.push(`ip ${args.join(' ')}`);
    if (args[0] === 'link' && args[1] === 'add') paths.add(`/sys/class/net/${args[2] ?? ''}`);
    if (args[0] === 'link' && args[1] === 'del') paths.delete(`/sys/class/net/${args[2] ?? ''}`);
    return done(undefined);
  };
  const removeTree = (p: string): Promise<void> => {
    calls.push(`rm ${p}`);
    for (const q of [...paths]) if (q === p || q.startsWith(`${p}/`)) paths.delete(q);
    return done(undefined);
  };
  return {
    sysctls,
    paths,
    calls,
    readSysctl: (k) => done(sysctls.get(k) ?? '0'),
    writeSysctl: (k, v) => done(void sysctls.set(k, v)),
    exists: (p) => done(paths.has(p) || [...paths].some((q) => q.startsWith(`${p}/`))),
    mkdirs: (p) => done(void paths.add(p)),
    removeTree,
    list: () => done([]),
    readLink: () => done(undefined),
    readText: (p) => done(p.endsWith('/mountinfo') || p.endsWith('/cgroup.procs') ? '' : (files.get(p) ?? '0-1')),
    writeText: (p, t) => done(void files.set(p, t)),
    ip,
    unmount: (p) => done(void calls.push(`umount ${p}`)),
    mountNamespace: (file, binds) => {
      calls.push(`unshare ${file}`, ...binds.map((b) => `bind ${b.source} ${b.target}`));
      return done(undefined);
    },
    removeDir: (p) => {
      calls.push(`rmdir ${p}`);
      paths.delete(p);
      return done(undefined);
    },
    cmdline: () => done(undefined),
    pids: () => done([]),
    kill: (pid) => void calls.push(`kill ${pid}`),
  };
}

const changes: HostChange[] = [
  { kind: 'sysctl', key: 'kernel.panic' },
  { kind: 'sysctl', key: 'net.ipv4.ip_forward', value: '1' },
  { kind: 'hostDir', path: '/var/lib/kubelet' },
  { kind: 'bridge', name: 'ebbrn0', address: '10.213.0.1/24' },
  { kind: 'mountNamespace', file: '/tmp/sb/real-node-0/mntns', binds: [{ source: '/tmp/sb/real-node-0/host/kubeletDir', target: '/var/lib/kubelet' }] },
  { kind: 'cgroupRoot', name: 'ebb-x', hierarchies: ['/sys/fs/cgroup/cpuset'], unified: [] },
];

describe('host changes: apply, record, revert', () => {
  it('records each change as it is made, and the revert undoes them all', async () => {
    const host = fakeHost();
    const saved: string[] = [];
    const ledger = new LedgerWriter({ ...host, writeText: (_p, t) => done(void saved.push(t)) }, { owner: 1, dir: '/tmp/sb', changes: [] });
    await applyHostChanges(host, changes, ledger);
    expect(saved).toHaveLength(changes.length);
    expect(host.calls).toContain('ip link add ebbrn0 type bridge');
    expect(host.sysctls.get('net.ipv4.ip_forward')).toBe('1');
    expect(host.paths.has('/var/lib/kubelet')).toBe(true);
    expect(host.paths.has('/tmp/sb/real-node-0/host/kubeletDir')).toBe(true);
    expect(host.calls).toContain('bind /tmp/sb/real-node-0/host/kubeletDir /var/lib/kubelet');
    expect(host.paths.has('/sys/fs/cgroup/cpuset/ebb-x')).toBe(true);

    // What the kubelet does once running.
    host.sysctls.set('kernel.panic', '10');
    host.paths.add('/var/lib/kubelet/device-plugins');

    const { failures } = await revertHostChanges(host, ledger.ledger.changes);
    expect(failures).toEqual([]);
    expect(host.sysctls.get('kernel.panic')).toBe('1');
    expect(host.sysctls.get('net.ipv4.ip_forward')).toBe('0');
    expect(host.paths.has('/var/lib/kubelet')).toBe(false);
    expect(host.paths.has('/sys/class/net/ebbrn0')).toBe(false);
    expect(host.paths.has('/sys/fs/cgroup/cpuset/ebb-x')).toBe(false);
    // Reverted newest first: the cgroup before the bridge, the bridge before the sysctl.
    expect(host.calls.indexOf('rmdir /sys/fs/cgroup/cpuset/ebb-x')).toBeLessThan(host.calls.indexOf('ip link del ebbrn0'));
  });

  it('queues ledger writes: nodes recording side by side never write the file at once, and the last write holds all', async () => {
    const host = fakeHost();
    const saved: string[] = [];
    let writing = 0;
    let overlapped = false;
    const writeText = async (_p: string, t: string): Promise<void> => {
      overlapped ||= writing > 0;
      writing++;
      await new Promise((r) => setTimeout(r, 10));
      saved.push(t);
      writing--;
    };
    const ledger = new LedgerWriter({ ...host, writeText }, { owner: 1, dir: '/tmp/sb', changes: [] });
    await Promise.all([ledger.recordProcess('kubelet real-node-0', 10, '/k'), ledger.recordProcess('kubelet real-node-1', 11, '/k')]);
    expect(overlapped).toBe(false);
    const last = JSON.parse(saved.at(-1) ?? '{}') as { changes: unknown[] };
    expect(last.changes).toHaveLength(2);
  });

  it('leaves alone a directory that existed before', async () => {
    const host = fakeHost();
    host.paths.add('/var/lib/kubelet/other');
    const ledger = new LedgerWriter(host, { owner: 1, dir: '/tmp/sb', changes: [] }, '/tmp/ledger.json');
    await applyHostChanges(host, [{ kind: 'hostDir', path: '/var/lib/kubelet' }], ledger);
    await revertHostChanges(host, ledger.ledger.changes);
    expect(host.paths.has('/var/lib/kubelet/other')).toBe(true);
  });

  it('reports a step that fails and still runs the others', async () => {
    const host = fakeHost();
    host.sysctls.set('kernel.panic', '10');
    const failing = { ...host, ip: () => Promise.reject(new Error('ip: busy')), exists: () => done(true) };
    const { failures } = await revertHostChanges(failing, [
      { kind: 'sysctl', key: 'kernel.panic', previous: '1' },
      { kind: 'bridge', name: 'ebbrn0' },
    ]);
    expect(failures).toEqual(['bridge: ip: busy']);
    expect(host.sysctls.get('kernel.panic')).toBe('1');
  });
});

describe('a ledger a killed run left', () => {
  const log = createLogger('test', 'silent');

  /** A host holding what a killed run of the first layout left (kubelet on the host's fixed paths). */
  function oldLayoutHost(): ReturnType<typeof fakeHost> & { mounts: Set<string> } {
    const host = fakeHost();
    const mounts = new Set(['/var/lib/kubelet', '/var/lib/kubelet/pods/p1/volumes/v', '/run/netns/cni-new']);
    const entries = new Map([
      ['/var/log/containers', ['web.log', 'other.log']],
      ['/run/netns', ['cni-before', 'cni-new', 'unrelated']],
    ]);
    for (const [dir, names] of entries) for (const name of names) host.paths.add(`${dir}/${name}`);
    host.sysctls.set('kernel.panic', '10');
    host.paths.add('/sys/class/net/ebbrn0');
    const ledger = {
      owner: 2 ** 22 + 1,
      dir: '/tmp/ebb-rn-old',
      changes: [
        { kind: 'sysctl', key: 'kernel.panic', previous: '1' },
        { kind: 'hostLinks', dir: '/var/log/containers', target: '/tmp/ebb-rn-old/real-node/pods' },
        { kind: 'bridge', name: 'ebbrn0' },
        { kind: 'newEntries', dir: '/run/netns', prefix: 'cni-', unmount: true, before: ['cni-before'] },
        { kind: 'mountsUnder', path: '/var/lib/kubelet' },
      ],
    };
    host.paths.add(LEDGER_PATH);
    const mountinfo = (): string => [...mounts].map((m) => `1 2 0:1 / ${m} rw - tmpfs tmpfs rw`).join('\n');
    return Object.assign(host, {
      mounts,
      readText: (p: string) => done(p === LEDGER_PATH ? JSON.stringify(ledger) : p.endsWith('/mountinfo') ? mountinfo() : ''),
      list: (dir: string) => done((entries.get(dir) ?? []).filter((n) => host.paths.has(`${dir}/${n}`))),
      readLink: (p: string) => done(p.endsWith('/web.log') ? '/tmp/ebb-rn-old/real-node/pods/web/0.log' : '/var/log/elsewhere'),
      unmount: (p: string) => done(void mounts.delete(p)),
    });
  }

  it('of the older layout is reverted by the next start, not refused', async () => {
    const host = oldLayoutHost();
    await cleanStaleHostChanges(host, log);
    expect(host.mounts).toEqual(new Set());
    expect(host.paths.has('/var/log/containers/web.log')).toBe(false);
    expect(host.paths.has('/var/log/containers/other.log')).toBe(true);
    expect(host.paths.has('/run/netns/cni-new')).toBe(false);
    expect(host.paths.has('/run/netns/cni-before')).toBe(true);
    expect(host.paths.has('/run/netns/unrelated')).toBe(true);
    expect(host.paths.has('/sys/class/net/ebbrn0')).toBe(false);
    expect(host.sysctls.get('kernel.panic')).toBe('1');
    expect(host.paths.has(LEDGER_PATH)).toBe(false);
  });

  it('with a kind no layout here knows: the rest is undone, and the start fails naming the change, the ledger and the command', async () => {
    const host = fakeHost();
    host.sysctls.set('kernel.panic', '10');
    const ledger = {
      owner: 2 ** 22 + 1,
      dir: '/tmp/ebb-rn-new',
      changes: [
        { kind: 'sysctl', key: 'kernel.panic', previous: '1' },
        { kind: 'tunnel', name: 't0' },
      ],
    };
    host.paths.add(LEDGER_PATH);
    const read = { ...host, readText: (p: string) => done(p === LEDGER_PATH ? JSON.stringify(ledger) : '') };
    const err = await cleanStaleHostChanges(read, log).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).toContain('{"kind":"tunnel","name":"t0"}');
    expect(message).toContain(`${LEDGER_PATH}, sandbox /tmp/ebb-rn-new`);
    expect(message).toContain('rm -r /run/ebb-real-node');
    expect(host.sysctls.get('kernel.panic')).toBe('1');
    expect(host.paths.has(LEDGER_PATH)).toBe(true);
  });
});

describe('processStartTime', () => {
  it("reads field 22 of this process's stat, and nothing for a process that is gone", async () => {
    const { realHostOps } = await import('./host-ops.ts');
    const { processStartTime } = await import('./host-apply.ts');
    expect(await processStartTime(realHostOps, process.pid)).toMatch(/^\d+$/);
    expect(await processStartTime(realHostOps, 2 ** 22 + 1)).toBeUndefined();
  });
});
