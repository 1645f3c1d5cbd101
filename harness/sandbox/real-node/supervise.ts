/**
 * Keeps a real node's process running as a service manager would: when it exits without being asked to
 * (it crashed, or a test killed it by PID to inject a fault), it is started again after a short back-off.
 */
import { writeFile } from 'node:fs/promises';
import type { Logger } from '../../../src/common/log.ts';
import { sleep } from '../../../src/common/wait.ts';
import type { Child } from '../process.ts';

export interface Supervised {
  /** The running instance (a new one after each restart). */
  current(): Child;
  /** How many times it was started again. */
  restarts(): number;
  /** Stops it for good (no restart). */
  stop(): Promise<void>;
}

export interface SuperviseOptions {
  name: string;
  start: () => Promise<Child>;
  /** Called with each new instance (the first included), e.g. to record its PID. */
  onStart: (child: Child) => Promise<void>;
  /** Written with the PID of each instance, for tests that kill it. */
  pidFile: string;
  log: Logger;
  backoffMs?: number;
}

export async function supervise(opts: SuperviseOptions): Promise<Supervised> {
  let child = await opts.start();
  let restarts = 0;
  let stopping = false;
  const started = async (c: Child): Promise<void> => {
    await writeFile(opts.pidFile, `${c.pid}\n`);
    await opts.onStart(c);
  };
  await started(child);
  const watch = (c: Child): void => {
    void c.exited.then(async (how) => {
      if (stopping) return;
      opts.log.warn({ process: opts.name, pid: c.pid, how }, 'process exited; starting it again');
      await sleep(opts.backoffMs ?? 1_000);
      if (stopping) return;
      try {
        child = await opts.start();
        restarts++;
        await started(child);
        watch(child);
      } catch (err) {
        opts.log.error({ process: opts.name, err: String(err) }, 'restart failed');
      }
    });
  };
  watch(child);
  return {
    current: () => child,
    restarts: () => restarts,
    stop: async () => {
      stopping = true;
      await child.stop();
    },
  };
}
