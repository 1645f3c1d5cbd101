/**
 * The names that tie an App to its pre-warm entries on ImageLists: the field manager the entries are applied
 * with, and the label on the ImageLists that hold them. Both are one per App, hashed when too long.
 */
import { createHash } from 'node:crypto';
import { GROUP } from './group.ts';

const PREWARM_MANAGER_PREFIX = 'ebb-prewarm/';
/**
 * The apiserver rejects field managers longer than 128 bytes or with non-printable characters. A namespace
 * (at most 63) and an App name (a DNS label of at most 52) always fit: the hashed form is a safeguard only.
 */
const FIELD_MANAGER_MAX_LENGTH = 128;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The field manager an App's pre-warm entries are applied with: one per App, so each App owns (and on rollout
 * completion removes) only its own ImageList entries. Hashed when `<namespace>/<name>` would be too long.
 */
export function prewarmFieldManager(namespace: string, name: string): string {
  const plain = `${PREWARM_MANAGER_PREFIX}${namespace}/${name}`;
  if (plain.length <= FIELD_MANAGER_MAX_LENGTH) return plain;
  const hash = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 16);
  return `${plain.slice(0, FIELD_MANAGER_MAX_LENGTH - hash.length - 1)}-${hash}`;
}

/** The App a pre-warm field manager belongs to, or undefined when `manager` is not one (or is a hashed one). */
export function parsePrewarmFieldManager(manager: string): { namespace: string; name: string } | undefined {
  if (!manager.startsWith(PREWARM_MANAGER_PREFIX)) return undefined;
  const [namespace, name, ...rest] = manager.slice(PREWARM_MANAGER_PREFIX.length).split('/');
  if (namespace === undefined || name === undefined || rest.length > 0 || !DNS_LABEL.test(namespace) || !DNS_LABEL.test(name)) return undefined;
  return { namespace, name };
}

/** ImageLists holding an App's pre-warm entries carry the label `prewarm.apps.ebb.dev/<key>` (set by its field manager). */
export const PREWARM_LABEL_PREFIX = `prewarm.${GROUP}/`;
const LABEL_NAME_MAX_LENGTH = 63;

/**
 * The label marking the ImageLists that hold an App's pre-warm entries: `prewarm.apps.ebb.dev/<namespace>.<name>`
 * (a namespace has no dots, so this is unambiguous), hashed when longer than a label name may be. The worker
 * finds those ImageLists with one LIST by this label, to follow their pulls and to clear them.
 */
export function prewarmLabelKey(namespace: string, name: string): string {
  const plain = `${namespace}.${name}`;
  if (plain.length <= LABEL_NAME_MAX_LENGTH) return `${PREWARM_LABEL_PREFIX}${plain}`;
  const hash = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 16);
  return `${PREWARM_LABEL_PREFIX}${plain.slice(0, LABEL_NAME_MAX_LENGTH - hash.length - 1)}-${hash}`;
}
