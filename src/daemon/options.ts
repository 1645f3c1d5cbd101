import { parseDaemonConfig, type DaemonConfig } from './config.ts';

/**
 * What the node daemon needs to run. A plain, frozen value: `daemonOptionsOf` derives it from the parsed
 * process config; tests build it with `daemonOptions({...})`.
 */
export interface DaemonOptions {
  /** The node this daemon serves; its ImageList has the same name. */
  readonly nodeName: string;
  /** The container runtime's CRI endpoint, `unix:///path`. */
  readonly criEndpoint: string;
  /** Pulls running at once. */
  readonly pullConcurrency: number;
  /** Deadline of one pull. */
  readonly pullTimeoutMs: number;
  /** Capped exponential backoff with jitter after a failed pull: first delay, and cap. */
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  /** A pulled image is looked up in the runtime again this often (image garbage collection may remove it). */
  readonly recheckPeriodMs: number;
  /** At or above this used percent of the image filesystem (CRI ImageFsInfo's mountpoint), no pull starts. */
  readonly imageFsHighPercent: number;
  /** Status changes within this window go out in one write. */
  readonly statusFlushMs: number;
  /** A watch that delivers nothing (not even a bookmark) for this long is re-opened. */
  readonly watchdogMs: number;
  /** The namespace of pull-secret copies, the only one whose Secrets the daemon reads; undefined: pull secrets off. */
  readonly pullSecretNamespace?: string | undefined;
  readonly httpAddress: string;
  /** 0 picks a free port. */
  readonly httpPort: number;
  readonly logLevel: string;
}

/**
 * The defaults are the settings table's (`DAEMON_SETTINGS`), read once: the options `ebb daemon` runs with when
 * only the required node name is set. One source, so the two cannot drift.
 */
export const DAEMON_DEFAULTS: Omit<DaemonOptions, 'nodeName' | 'criEndpoint'> = (() => {
  const { nodeName: _node, criEndpoint: _endpoint, ...defaults } = daemonOptionsOf(parseDaemonConfig({ EBB_NODE_NAME: 'defaults' }));
  return Object.freeze(defaults);
})();

/** Options with the defaults filled in. */
export function daemonOptions(o: Pick<DaemonOptions, 'nodeName' | 'criEndpoint'> & Partial<DaemonOptions>): DaemonOptions {
  return Object.freeze({ ...DAEMON_DEFAULTS, ...o });
}

/** The daemon's options from the process's parsed configuration. */
export function daemonOptionsOf(cfg: DaemonConfig): DaemonOptions {
  return Object.freeze({
    nodeName: cfg.nodeName,
    criEndpoint: cfg.criEndpoint,
    pullConcurrency: cfg.pullConcurrency,
    pullTimeoutMs: cfg.pullTimeoutMs,
    backoffBaseMs: cfg.pullBackoff.baseMs,
    backoffMaxMs: cfg.pullBackoff.capMs,
    recheckPeriodMs: cfg.recheckPeriodMs,
    imageFsHighPercent: cfg.imageFsHighPercent,
    statusFlushMs: cfg.statusFlushMs,
    watchdogMs: cfg.watchdogMs,
    pullSecretNamespace: cfg.pullSecretNamespace,
    httpAddress: cfg.httpAddress,
    httpPort: cfg.httpPort,
    logLevel: cfg.logLevel,
  });
}
