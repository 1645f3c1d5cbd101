/**
 * Where the watcher serves the rollouts page, beside Bull Board (same listener, same login): `rollouts` next to
 * the board's last path segment (`/board` → `/rollouts`, `/ebb/board` → `/ebb/rollouts`), so a board mounted
 * below a prefix (behind an ingress that routes only that prefix) has its page below the same prefix.
 */
export const ROLLOUTS_PATH = '/rollouts';

export function rolloutsPathFor(boardPath: string): string {
  const trimmed = boardPath.replace(/\/+$/, '');
  const slash = trimmed.lastIndexOf('/');
  return `${slash <= 0 ? '' : trimmed.slice(0, slash)}${ROLLOUTS_PATH}`;
}
