/**
 * Runs an asynchronous stop before SIGINT or SIGTERM ends the process. A test runner exits on the signal at
 * once (vitest's handler calls `process.exit()`), before any teardown could run, which would leave what the
 * sandbox changed on the host (the real nodes' bridges, cgroups, sysctls) until the next start. The handlers
 * present when this is installed are held back: on the signal the stop runs first, then they are put back and
 * the signal raised again, so the process ends as it would have (the runner's exit code, or killed by it).
 *
 * A signal arriving while the stop runs is ignored: a terminal's Ctrl-C reaches every process of the
 * foreground group, and `npx` forwards the same one to its child, so one key press often arrives twice.
 * Ctrl-\ (SIGQUIT) still ends the process at once.
 */

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;
type GuardedSignal = (typeof SIGNALS)[number];

export interface StopOnSignalOptions {
  /** Runs once, on the first signal; its failure does not keep the process alive. */
  stop: (signal: GuardedSignal) => Promise<void>;
  /** Raises the signal again once the held handlers are back (a seam: unit tests record it). */
  raise?: (signal: GuardedSignal) => void;
}

/** Installs the guard; returns what removes it and puts the held handlers back (idempotent). */
export function stopBeforeExit(opts: StopOnSignalOptions): () => void {
  const raise = opts.raise ?? ((signal: GuardedSignal) => process.kill(process.pid, signal));
  const held = SIGNALS.map((signal) => ({ signal, listeners: process.listeners(signal) }));
  let released = false;
  let stopping = false;
  const release = (): void => {
    if (released) return;
    released = true;
    for (const { signal, listeners } of held) {
      process.off(signal, onSignal);
      for (const listener of listeners) process.on(signal, listener);
    }
  };
  function onSignal(signal: NodeJS.Signals): void {
    if (stopping) return;
    stopping = true;
    const which = signal === 'SIGTERM' ? 'SIGTERM' : 'SIGINT';
    void opts
      .stop(which)
      .catch(() => undefined)
      .finally(() => {
        release();
        raise(which);
      });
  }
  for (const { signal, listeners } of held) {
    for (const listener of listeners) process.off(signal, listener);
    process.on(signal, onSignal);
  }
  return release;
}
