/**
 * How long Redis has been out of reach, for /healthz: a process whose Redis connection has not been ready
 * for longer than a set time reports itself unhealthy, so the kubelet restarts it (a client wedged after a
 * network fault recovers that way; a Redis that is really gone shows as restarts, not as a silent stall).
 */
export class RedisReachability {
  /** When the connection was last lost (or, before the first connect, when it was created). */
  private downSince: number | undefined;
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
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

  /** Why /healthz fails: Redis out of reach for longer than `limitMs` (0: never fails); undefined otherwise. */
  problem(limitMs: number): string | undefined {
    if (limitMs <= 0 || this.downSince === undefined) return undefined;
    const ms = this.now() - this.downSince;
    return ms > limitMs ? `redis unreachable for ${Math.round(ms / 1000)}s` : undefined;
  }
}
