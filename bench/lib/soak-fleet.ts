/**
 * The ebb processes of the soak: one watcher, one long-lived worker (never killed: its memory over the whole
 * run is what "flat" is judged on) and one worker that is SIGKILLed and replaced every few minutes. A child
 * that exits without the soak asking is counted as a crash and started again.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { spawnEbbChild, type EbbChild, type ErrorTally, type Role } from './soak-procs.ts';

export interface Crash {
  name: string;
  at: number;
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class Fleet {
  watcher!: EbbChild;
  steady!: EbbChild;
  victim!: EbbChild;
  readonly crashes: Crash[] = [];
  kills = 0;
  /** Every child ever started, for the memory of each incarnation. */
  readonly all: EbbChild[] = [];
  private readonly logDir: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly tally: ErrorTally;
  private respawns = 0;

  constructor(dir: string, env: NodeJS.ProcessEnv, tally: ErrorTally) {
    this.logDir = join(dir, 'logs');
    this.env = env;
    this.tally = tally;
  }

  private spawn(role: Role, name: string): EbbChild {
    const c = spawnEbbChild(role, name, this.env, this.logDir, this.tally);
    this.all.push(c);
    return c;
  }

  async start(signal?: AbortSignal): Promise<void> {
    await mkdir(this.logDir, { recursive: true });
    this.watcher = this.spawn('watcher', 'watcher');
    this.steady = this.spawn('worker', 'worker-a');
    this.victim = this.spawn('worker', 'worker-b');
    await Promise.all([this.watcher.port(signal), this.steady.port(signal), this.victim.port(signal)]);
  }

  /** The children running now. */
  live(): EbbChild[] {
    return [this.watcher, this.steady, this.victim];
  }

  /** SIGKILLs the victim worker and starts its replacement at once. */
  async killVictim(signal?: AbortSignal): Promise<void> {
    await this.victim.kill();
    this.kills++;
    this.victim = this.spawn('worker', `worker-b${this.kills}`);
    await this.victim.port(signal);
  }

  /** Restarts any child that exited on its own; records it as a crash. */
  async reapCrashes(signal?: AbortSignal): Promise<void> {
    for (const key of ['watcher', 'steady', 'victim'] as const) {
      const c = this[key];
      if (!c.exit || c.exit.expected) continue;
      this.crashes.push({ name: c.name, at: c.exit.at, code: c.exit.code, signal: c.exit.signal });
      const next = this.spawn(c.role, `${c.name}-r${++this.respawns}`);
      this[key] = next;
      await next.port(signal).catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.live().map((c) => c.stop()));
  }
}
