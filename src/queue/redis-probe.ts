/**
 * Round trips for /healthz. A Redis that stalls (a paused or wedged server, a proxy that keeps the TCP connection
 * open) never closes the connection, so the connection's own events never say it is gone: a PING sent every few
 * seconds does. The first PING left unanswered starts the clock of RedisReachability; an answer stops it.
 */
import type { RedisReachability } from './reachability.ts';

/** What the probe needs of a client (an ioredis Redis or Cluster). */
export interface Pingable {
  ping(): Promise<unknown>;
}

export interface ProbeOptions {
  intervalMs: number;
  /** True once the client's owner closed it: the probe stops. */
  closed: () => boolean;
}

/**
 * PINGs `client` every `intervalMs` (one at a time: a PING still unanswered is not doubled) and tells
 * `reachability` when each is sent and answered. The PING fails at the connection's command deadline; until an
 * answer comes, the silence counts from the first PING sent. The timer never keeps the process alive.
 */
export function probeRedis(client: Pingable, reachability: RedisReachability, opts: ProbeOptions): void {
  let inFlight = false;
  const timer = setInterval(() => {
    if (opts.closed()) {
      clearInterval(timer);
      return;
    }
    if (inFlight) return;
    inFlight = true;
    reachability.pinged();
    client.ping().then(
      () => {
        inFlight = false;
        reachability.answered();
      },
      () => {
        inFlight = false;
      },
    );
  }, opts.intervalMs);
  timer.unref();
}
