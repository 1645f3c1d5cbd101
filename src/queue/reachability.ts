/**
 * How long Redis has been out of reach, for /healthz: a process whose Redis connection has not been ready, or
 * whose PINGs (redis-probe.ts) have gone unanswered, for longer than a set time reports itself unhealthy, so
 * the kubelet restarts it (a client wedged after a network fault recovers that way; a Redis that is really gone
 * or stalled shows as restarts, not as a silent stall).
 */
/** How often a connection that reports to a RedisReachability sends its PING (redis-probe.ts). */
export const PROBE_INTERVAL_MS = 5_000;

export class RedisReachability {
  /** When the connection was last lost (or, before the first connect, when it was created). */
  private downSince: number | undefined;
  /** When the first PING still without an answer was sent. */
  private silentSince: number | undefined;
  private readonly now: () => number;
  /** How often the connection reporting here PINGs Redis. */
  readonly probeIntervalMs: number;

  constructor(now: () => number = Date.now, probeIntervalMs = PROBE_INTERVAL_MS) {
    this.now = now;
    this.probeIntervalMs = probeIntervalMs;
    this.downSince = now();
  }

  /** The connection is ready. */
  ready(): void {
    this.downSince = undefined;
  }

  /** The connection was lost; the first loss of an outage counts. */
  lost(): void {
    this.downSince ??= this.now();
  }

  /** A PING was sent; the first one without an answer counts. */
  pinged(): void {
    this.silentSince ??= this.now();
  }

  /** A PING came back. */
  answered(): void {
    this.silentSince = undefined;
  }

  /** Why /healthz fails: Redis out of reach or silent for longer than `limitMs` (0: never fails); undefined otherwise. */
  problem(limitMs: number): string | undefined {
    if (limitMs <= 0) return undefined;
    const since = (t: number | undefined): number => (t === undefined ? 0 : this.now() - t);
    const down = since(this.downSince);
    if (down > limitMs) return `redis unreachable for ${Math.round(down / 1000)}s`;
    const silent = since(this.silentSince);
    return silent > limitMs ? `redis has not answered a PING for ${Math.round(silent / 1000)}s` : undefined;
  }
}
