/**
 * When an open StreamIsActive stream next re-reads the backlog by itself (an enqueue re-reads it at once
 * anyway). While active, every `activeMs`: the push of "inactive" follows the drain closely. While inactive,
 * only when the backlog can grow without an enqueue the watcher sees: when the earliest delayed job (a
 * retry backoff) enters the due window (`growsAt`), and otherwise after `idleMs`, for what the watcher
 * cannot see (a pause lifted by `ebb queue`, an enqueue by another process). Never sooner than `activeMs`.
 */
export function recheckDelay(r: { active: boolean; now: number; growsAt?: number; activeMs: number; idleMs: number }): number {
  if (r.active) return r.activeMs;
  const idle = Math.max(r.activeMs, r.idleMs);
  if (r.growsAt === undefined) return idle;
  return Math.min(idle, Math.max(r.activeMs, r.growsAt - r.now));
}
