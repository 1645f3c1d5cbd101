/**
 * Redis with failover, for tests: a primary with a replica watched by three sentinels, or a Cluster of
 * primaries. Every server is a child process on 127.0.0.1 (free ports), stopped or killed by its PID.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '../../src/common/wait.ts';
import { startChild, type Child } from './process.ts';
import { freePort } from './ports.ts';
import { infoField } from './redis.ts';

const run = promisify(execFile);
const READY_MS = 20_000;
const STOP_MS = 5_000;

/** One server of a set; `kill()` is SIGKILL (a crash), `stop()` SIGTERM then SIGKILL. */
export interface RedisProcess {
  readonly port: number;
  readonly pid: number;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

function wrap(child: Child, port: number): RedisProcess {
  return {
    port,
    pid: child.pid,
    kill: async () => {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await child.exited;
    },
    stop: () => child.stop(STOP_MS),
  };
}

/** Starts redis-server with `extra` arguments and waits until the child (by PID) answers INFO. */
async function startServer(parent: string, extra: (port: number, dir: string) => string[], pickPort = freePort): Promise<RedisProcess> {
  const port = await pickPort();
  const dir = await mkdtemp(join(parent, `redis-${port}-`));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'];
  const child = startChild(`redis-${port}`, 'redis-server', [...args, ...extra(port, dir)], join(dir, 'redis.log'));
  await waitFor(async () => ((await infoField(port, 'server', 'process_id')) === String(child.pid) ? true : undefined), {
    timeoutMs: READY_MS,
    intervalMs: 50,
    what: `redis-server on port ${port}`,
  });
  return wrap(child, port);
}

export interface SentinelSet {
  readonly masterName: string;
  readonly primary: RedisProcess;
  readonly replica: RedisProcess;
  readonly sentinels: readonly RedisProcess[];
  /** The port the sentinels currently name as the primary. */
  primaryPort(): Promise<number | undefined>;
  stop(): Promise<void>;
}

export interface SentinelSetOptions {
  dir: string;
  masterName?: string;
  /** Sentinel `down-after-milliseconds`: how long the primary must be silent before it is declared down. */
  downAfterMs?: number;
  failoverTimeoutMs?: number;
}

/** A primary, a replica in sync with it, and three sentinels (quorum 2) that all know both and each other. */
export async function startSentinelSet(opts: SentinelSetOptions): Promise<SentinelSet> {
  const masterName = opts.masterName ?? 'ebb';
  const started: RedisProcess[] = [];
  try {
    const primary = await startServer(opts.dir, () => []);
    started.push(primary);
    const replica = await startServer(opts.dir, () => ['--replicaof', '127.0.0.1', String(primary.port)]);
    started.push(replica);
    await waitFor(async () => ((await infoField(replica.port, 'replication', 'master_link_status')) === 'up' ? true : undefined), {
      timeoutMs: READY_MS,
      what: 'the replica in sync',
    });
    const sentinels: RedisProcess[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const dir = await mkdtemp(join(opts.dir, `sentinel-${port}-`));
      const conf = join(dir, 'sentinel.conf');
      const lines = [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${masterName} 127.0.0.1 ${primary.port} 2`,
        `sentinel down-after-milliseconds ${masterName} ${opts.downAfterMs ?? 1_000}`,
        `sentinel failover-timeout ${masterName} ${opts.failoverTimeoutMs ?? 3_000}`,
        `sentinel parallel-syncs ${masterName} 1`,
      ];
      await writeFile(conf, `${lines.join('\n')}\n`);
      const child = startChild(`sentinel-${port}`, 'redis-sentinel', [conf], join(dir, 'sentinel.log'));
      const s = wrap(child, port);
      started.push(s);
      sentinels.push(s);
    }
    // Ready for a failover: every sentinel sees the primary healthy, its replica and the two other sentinels.
    for (const s of sentinels) {
      await waitFor(
        async () => {
          const m = await infoField(s.port, 'sentinel', 'master0');
          return m?.includes('status=ok') && m.includes('slaves=1') && m.includes('sentinels=3') ? true : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 100, what: `sentinel on port ${s.port} to see the whole set` },
      );
    }
    const primaryPort = async (): Promise<number | undefined> => {
      for (const s of sentinels) {
        const m = await infoField(s.port, 'sentinel', 'master0');
        const port = /address=[^,]*:(\d+)/.exec(m ?? '')?.[1];
        if (port) return Number(port);
      }
      return undefined;
    };
    return { masterName, primary, replica, sentinels, primaryPort, stop: () => stopAll(started) };
  } catch (err) {
    await stopAll(started);
    throw err;
  }
}

export interface RedisClusterSet {
  readonly nodes: readonly RedisProcess[];
  /** The port of the primary that serves the slot of `key` now, as the surviving nodes see it. */
  ownerOf(key: string): Promise<number | undefined>;
  stop(): Promise<void>;
}

/**
 * `primaries` cluster-enabled servers, each with `replicas` replicas, joined with `redis-cli --cluster create`;
 * resolves once every slot is served.
 */
export async function startRedisCluster(opts: { dir: string; primaries?: number; replicas?: number }): Promise<RedisClusterSet> {
  const started: RedisProcess[] = [];
  const replicas = opts.replicas ?? 0;
  try {
    for (let i = 0; i < (opts.primaries ?? 3) * (1 + replicas); i++) {
      started.push(
        await startServer(
          opts.dir,
          (port, dir) => ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--cluster-node-timeout', '2000'],
          freeClusterPort,
        ),
      );
    }
    await run('redis-cli', ['--cluster', 'create', ...started.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(replicas), '--cluster-yes'], {
      timeout: 30_000,
    });
    for (const n of started) {
      await waitFor(async () => ((await clusterState(n.port)) === 'ok' ? true : undefined), {
        timeoutMs: READY_MS,
        what: `cluster_state:ok on port ${n.port}`,
      });
    }
    // A replica takes over only with a recent link to its primary: wait until every replica is in sync.
    for (const n of started) {
      await waitFor(
        async () => {
          const role = await infoField(n.port, 'replication', 'role');
          return role === 'master' || (await infoField(n.port, 'replication', 'master_link_status')) === 'up' ? true : undefined;
        },
        { timeoutMs: READY_MS, what: `the node on port ${n.port} in sync` },
      );
    }
    const ownerOf = async (key: string): Promise<number | undefined> => {
      for (const n of started) {
        const owner = await slotOwner(n.port, key).catch(() => undefined);
        if (owner !== undefined) return owner;
      }
      return undefined;
    };
    return { nodes: started, ownerOf, stop: () => stopAll(started) };
  } catch (err) {
    await stopAll(started);
    throw err;
  }
}

/** A free port whose cluster bus port (port + 10000) is free too. */
async function freeClusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10_000 <= 65_535 && (await canBind(port + 10_000))) return port;
  }
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** `cluster_state` of CLUSTER INFO (not part of INFO): ok once every slot is served. */
async function clusterState(port: number): Promise<string | undefined> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'cluster', 'info'], { timeout: 5_000 });
  return /cluster_state:(\w+)/.exec(stdout)?.[1];
}

/** The port of the primary serving `key`'s slot in the view of the node on `port`. */
async function slotOwner(port: number, key: string): Promise<number | undefined> {
  const cli = (...args: string[]): Promise<string> =>
    run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5_000 }).then((r) => r.stdout);
  const slot = Number((await cli('cluster', 'keyslot', key)).trim());
  for (const line of (await cli('cluster', 'nodes')).split('\n')) {
    const [, address, flags, , , , , state, ...ranges] = line.split(' ');
    if (!address || !flags?.includes('master') || flags.includes('fail') || state !== 'connected') continue;
    const served = ranges.some((r) => {
      const [from, to] = r.split('-').map(Number);
      return from !== undefined && slot >= from && slot <= (to ?? from);
    });
    if (served) return Number(/:(\d+)@/.exec(address)?.[1]);
  }
  return undefined;
}

async function stopAll(procs: readonly RedisProcess[]): Promise<void> {
  await Promise.all(procs.map((p) => p.stop().catch(() => undefined)));
}
