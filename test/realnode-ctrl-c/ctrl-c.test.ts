/**
 * Ctrl-C of a real-node test run, as a terminal sends it (SIGINT to the whole foreground process group of
 * `npx vitest run --project realnode …`) once its real nodes are up: by the time the run has exited, the real
 * nodes are stopped and every host change is undone — no `ebbrn*` bridge, no ebb cgroup root, `ip_forward` as
 * before, no ledger, no kubelet or containerd of that run — and its servers are gone soon after.
 *
 * A layer of its own, run alone and after the realnode layer (`make test-realnode`, `make test`): the run it
 * interrupts starts real nodes, and one machine runs one sandbox with real nodes at a time.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { expect, it } from 'vitest';
import { createLogger } from '../../src/common/log.ts';
import { waitFor } from '../../src/common/wait.ts';
import { alive, descendants } from '../processes.ts';
import { DEFAULT_BIN_DIR, PROJECT_ROOT } from '../../harness/sandbox/paths.ts';
import { LEDGER_PATH, readLedger } from '../../harness/sandbox/real-node/host-apply.ts';
import { realHostOps } from '../../harness/sandbox/real-node/host-ops.ts';
import { FORWARDING_SYSCTL } from '../../harness/sandbox/real-node/host-plan.ts';
import { cleanStaleHostChanges, missingPrerequisites } from '../../harness/sandbox/real-node/real-nodes.ts';

const READY = /sandbox with (\d+) real nodes ready in \d+ ms \((.+)\)/;

/** This process's environment without what vitest sets for its workers (the spawned run is a vitest of its own). */
function runEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'TEST' && k !== 'NODE_ENV'));
}

/**
 * `npx vitest run` of one real-node file in a process group of its own, as a shell starts a foreground job; npx
 * forwards the signal to vitest too, so vitest gets it twice, as from a terminal.
 */
function startRun(): ChildProcessByStdio<null, Readable, Readable> {
  return spawn('npx', ['vitest', 'run', '--project', 'realnode', 'test/realnode/pod.test.ts'], {
    cwd: PROJECT_ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...runEnv(), PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}` },
  });
}

/** Those of `processes` still running their executable. */
async function stillRunning(processes: { name: string; pid: number; exe: string }[]): Promise<string[]> {
  const running: string[] = [];
  for (const p of processes) {
    const cmdline = await readFile(`/proc/${p.pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0')[0] === p.exe) running.push(`${p.name} (${p.pid})`);
  }
  return running;
}

/** What the real nodes change on the host, as seen now. */
async function hostState(): Promise<{ bridges: string[]; cgroups: string[]; forwarding: string; ledger: boolean }> {
  const bridges = (await readdir('/sys/class/net')).filter((n) => n.startsWith('ebbrn'));
  const cgroups: string[] = [];
  for (const hierarchy of await readdir('/sys/fs/cgroup')) {
    const names = await readdir(join('/sys/fs/cgroup', hierarchy)).catch(() => []);
    cgroups.push(...names.filter((n) => n.startsWith('ebb-real-node-')).map((n) => `${hierarchy}/${n}`));
  }
  return { bridges, cgroups, forwarding: await realHostOps.readSysctl(FORWARDING_SYSCTL), ledger: await realHostOps.exists(LEDGER_PATH) };
}

it('Ctrl-C once the real nodes are up stops them and undoes every host change before the run exits', async () => {
  const missing = await missingPrerequisites(DEFAULT_BIN_DIR);
  if (missing.length > 0) throw new Error(`this test needs ${missing.join(', ')}: run \`make tools\` as root`);
  const signal = AbortSignal.timeout(420_000);
  const before = await hostState();
  expect(before, 'no real node runs on this machine before the test').toMatchObject({ bridges: [], cgroups: [], ledger: false });

  const proc = startRun();
  let output = '';
  proc.stdout.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => proc.once('exit', (code, sig) => r({ code, signal: sig })));
  let runDir: string | undefined;
  try {
    const ready = await waitFor(() => Promise.resolve(READY.exec(output) ?? undefined), {
      timeoutMs: 300_000,
      intervalMs: 100,
      signal,
      what: 'the run’s real nodes ready',
    });
    runDir = ready[2] ?? '';
    const ledger = await readLedger(realHostOps);
    const processes = (ledger?.changes ?? []).flatMap((c) => (c.kind === 'process' ? [c] : []));
    const up = await hostState();
    expect(up.bridges).toEqual(['ebbrn0', 'ebbrn1']);
    expect(up.cgroups.length).toBeGreaterThan(0);
    expect(up.forwarding).toBe('1');
    expect(processes.map((p) => p.name).sort()).toEqual(['containerd real-node-0', 'containerd real-node-1', 'kubelet real-node-0', 'kubelet real-node-1']);
    const servers = descendants(proc.pid ?? 0);

    process.kill(-(proc.pid ?? 0), 'SIGINT');
    const how = await exited;
    // Checked at once: undone before the run exited, not by something after it.
    const after = await hostState();
    expect(after, `the host when the run exited:\n${output.slice(-3000)}`).toEqual({ bridges: [], cgroups: [], forwarding: before.forwarding, ledger: false });
    expect(how.code === 130 || how.signal === 'SIGINT', `interrupted, not finished (${JSON.stringify(how)})`).toBe(true);
    const stopped = /real nodes stopped in \d+ ms/.exec(output);
    expect(stopped, 'the run says it stopped the real nodes').not.toBeNull();
    process.stdout.write(`${stopped?.[0] ?? ''}\n`);
    expect(await stillRunning(processes), 'no kubelet or containerd of the run').toEqual([]);
    expect(await realHostOps.exists(runDir), 'the run’s directory removed').toBe(false);
    await waitFor(() => Promise.resolve(servers.some(alive) ? undefined : true), {
      timeoutMs: 30_000,
      intervalMs: 250,
      signal,
      what: 'every server of the run gone',
    });
  } finally {
    if (proc.exitCode === null && proc.signalCode === null && proc.pid !== undefined) process.kill(-proc.pid, 'SIGKILL');
    await exited;
    // A failed run leaves the host as the next start would find it: reverted here instead.
    if (await realHostOps.exists(LEDGER_PATH)) await cleanStaleHostChanges(realHostOps, createLogger('test', 'warn'));
    if (runDir) await rm(runDir, { recursive: true, force: true });
  }
});
