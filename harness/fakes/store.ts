/**
 * Building blocks of the in-memory apiserver used by the fake AppClient: JSON merge patch, label-selector
 * strings, object metadata bookkeeping (uid, resourceVersion, generation) and KubeErrors like the real ones.
 */
import { KubeError } from '../../src/kube/errors.ts';
import { isRecord } from '../../src/common/guards.ts';
import type { ObjectMeta, StoredMeta } from '../../src/kube/types.ts';

type Obj = Record<string, unknown>;

/** RFC 7386: objects merge, null deletes, anything else (arrays too) replaces. */
export function mergePatch<T>(target: T, patch: unknown): T {
  if (!isRecord(patch)) return structuredClone(patch) as T;
  const out: Obj = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out as T;
}

type Requirement = (labels: Readonly<Record<string, string>>) => boolean;

function parseRequirement(text: string): Requirement {
  const t = text.trim();
  const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(t);
  if (set) {
    const [, key = '', op, list = ''] = set;
    const values = list.split(',').map((v) => v.trim());
    return op === 'in' ? (l) => l[key] !== undefined && values.includes(l[key]) : (l) => l[key] === undefined || !values.includes(l[key]);
  }
  const eq = /^([^=!]+)(==|=|!=)(.*)$/.exec(t);
  if (eq) {
    const [, key = '', op, value = ''] = eq;
    return op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value;
  }
  if (t.startsWith('!')) return (l) => !Object.hasOwn(l, t.slice(1));
  return (l) => Object.hasOwn(l, t);
}

/** Parses a label-selector string (`a=b,c in (d,e),!f`) into a predicate. */
export function parseSelector(selector: string): Requirement {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur.trim() !== '') parts.push(cur);
  const reqs = parts.map(parseRequirement);
  return (labels) => reqs.every((r) => r(labels));
}

export const notFound = (what: string): KubeError => new KubeError('NotFound', 404, `${what} not found`, 'NotFound');
export const alreadyExists = (what: string): KubeError => new KubeError('AlreadyExists', 409, `${what} already exists`, 'AlreadyExists');
export const conflict = (what: string): KubeError => new KubeError('Conflict', 409, `${what}: the object has been modified`, 'Conflict');

/** Counts calls per operation and fails chosen calls (the Nth from now) with a chosen error. */
export class CallLog {
  readonly counts = new Map<string, number>();
  private readonly failures = new Map<string, { at: number; error: Error }[]>();

  /** The `nth` next call (1 = the very next) of `op` (e.g. `pods.create`) throws `error`. */
  failNth(op: string, nth: number, error: Error): void {
    const list = this.failures.get(op) ?? [];
    list.push({ at: this.count(op) + nth, error });
    this.failures.set(op, list);
  }

  count(op: string): number {
    return this.counts.get(op) ?? 0;
  }

  /** Records a call; throws when a failure was planned for it. */
  call(op: string): void {
    const n = this.count(op) + 1;
    this.counts.set(op, n);
    const planned = this.failures.get(op)?.find((f) => f.at === n);
    if (planned) throw planned.error;
  }
}

/** Fills server-set metadata on create (`name` is the object's, `''` when it has none). */
export function stamp(
  meta: ObjectMeta,
  at: { namespace: string; uid: string; resourceVersion: string; now: Date },
): ObjectMeta & StoredMeta & { namespace: string } {
  const { namespace, uid, resourceVersion, now } = at;
  return { ...meta, name: meta.name ?? '', namespace, uid, resourceVersion, creationTimestamp: now.toISOString().replace(/\.\d{3}Z$/, 'Z') };
}
