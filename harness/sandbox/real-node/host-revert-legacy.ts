/**
 * Kinds of change the first real-node layout recorded (one node, whose kubelet and containerd used the host's
 * fixed paths directly) and the current one no longer makes: a ledger such a run left when it was killed is
 * still reverted by the next start, not refused.
 */
import { join } from 'node:path';
import { unmountUnder, type HostOps } from './host-ops.ts';

export type LegacyChange =
  /** Symlinks in `dir` (the kubelet's /var/log/containers) pointing into `target`: removed. */
  | { kind: 'hostLinks'; dir: string; target: string }
  /** Entries of a fixed directory starting with `prefix` and absent from `before`: removed (unmounted first when `unmount`). */
  | { kind: 'newEntries'; dir: string; prefix: string; unmount: boolean; before: string[] }
  /** Every mount at or under `path` (the kubelet's root, pod volumes, container root filesystems): unmounted. */
  | { kind: 'mountsUnder'; path: string };

type LegacyReverter<K extends LegacyChange['kind']> = (ops: HostOps, change: Extract<LegacyChange, { kind: K }>) => Promise<void>;

export const LEGACY_REVERTERS: { [K in LegacyChange['kind']]: LegacyReverter<K> } = {
  hostLinks: async (ops, c) => {
    for (const name of await ops.list(c.dir)) {
      const target = await ops.readLink(join(c.dir, name));
      if (target?.startsWith(c.target)) await ops.removeTree(join(c.dir, name));
    }
  },
  newEntries: async (ops, c) => {
    const before = new Set(c.before);
    for (const name of (await ops.list(c.dir)).filter((e) => e.startsWith(c.prefix) && !before.has(e))) {
      const path = join(c.dir, name);
      if (c.unmount) await ops.unmount(path);
      await ops.removeTree(path);
    }
  },
  mountsUnder: (ops, c) => unmountUnder(ops, c.path),
};
