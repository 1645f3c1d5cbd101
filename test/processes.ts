/** Process checks the Ctrl-C tests share: whether a PID still runs, and every descendant of a process. */
import { execFileSync } from 'node:child_process';

/** The process with this PID still runs (or is a zombie not yet reaped). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Every descendant of `pid` (children first found by their parent), by PID. */
export function descendants(pid: number): number[] {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number));
  const out: number[] = [];
  const frontier = [pid];
  while (frontier.length > 0) {
    const parent = frontier.pop();
    for (const [child, ppid] of table) {
      if (ppid === parent && child !== undefined) {
        out.push(child);
        frontier.push(child);
      }
    }
  }
  return out;
}
