/**
 * `admission/` owns the dry run before a delete: the dry run (this file), which deletes need one
 * (`replacement.ts`) and the RolloutHeld condition it raises (`rollout-held.ts`).
 *
 * The dry run before a delete: for each revision the plan recreates pods from, the apiserver is asked to
 * create one replacement pod and its claims with `dryRun=All`, under generated names. What it refuses for a
 * reason only an edit (of the template or of the cluster's policies) can lift holds that revision's deletes.
 * A quota refusal does not: the pod about to be deleted still counts against the quota, its replacement will
 * not. Refusals that heal with time (429, 5xx, a webhook down) are thrown: the reconcile backs off and retries.
 * Accepted revisions are remembered (`AdmissionVerdicts`), so a rollout costs one dry run per revision, and a
 * pod the App created at a revision vouches for that revision as a dry run would (`vouchByPods`): the
 * rollout's first delete is dry-run, the deletes after it are vouched for by the pods it recreated.
 */
import type { App } from '../../../api/app.ts';
import { fnv1a32 } from '../../../common/hash.ts';
import type { Logger } from '../../../common/log.ts';
import { isKubeError } from '../../../kube/errors.ts';
import type { KubeObject, Named, Pod, Stored } from '../../../kube/types.ts';
import { getPodRevision, isControlledBy, isTerminating } from '../pods/predicates.ts';
import type { Replacement } from '../model/actions.ts';
import type { Refusal, Refusals } from '../model/refusals.ts';
import { canonicalJson } from '../../../common/canonical-json.ts';
import type { DryRunCreator } from '../model/client.ts';

const DEFAULT_TTL_MS = 10 * 60_000;
const DEFAULT_MAX_ENTRIES = 10_000;

/**
 * Revisions whose replacements the apiserver accepted, for `ttlMs` (policies may change meanwhile; the
 * verdict is a saving, not a promise). Refusals are never remembered: a held App asks again each reconcile,
 * so a relaxed policy resumes its rollout without an edit. Bounded: the oldest entries go first.
 */
export class AdmissionVerdicts {
  private readonly accepted = new Map<string, number>();
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(now: () => number = Date.now, ttlMs = DEFAULT_TTL_MS, maxEntries = DEFAULT_MAX_ENTRIES) {
    this.now = now;
    this.ttlMs = ttlMs;
    this.maxEntries = maxEntries;
  }

  isAccepted(key: string): boolean {
    const at = this.accepted.get(key);
    if (at === undefined) return false;
    if (this.now() - at < this.ttlMs) return true;
    this.accepted.delete(key);
    return false;
  }

  /** Remembers `key` as accepted at `at` (epoch ms; now by default), for what is left of the TTL from then. */
  remember(key: string, at: number = this.now()): void {
    if (this.now() - at >= this.ttlMs || (this.accepted.get(key) ?? -Infinity) > at) return;
    this.accepted.delete(key);
    this.accepted.set(key, at);
    while (this.accepted.size > this.maxEntries) {
      const oldest = this.accepted.keys().next();
      if (oldest.done === true) break;
      this.accepted.delete(oldest.value);
    }
  }
}

/** The App (by UID), the revision, and the claims (volumeClaimTemplates are not part of a revision). */
export function verdictKey(app: Stored<App>, replacement: Replacement): string {
  const claims = fnv1a32(canonicalJson(replacement.claims.map((c) => c.spec))).toString(16);
  return `${app.metadata.uid}/${replacement.revision}/${claims}`;
}

/** The object under a generated name, so the dry run cannot collide with the live object (or be mistaken for it). */
function generated<T extends KubeObject>(obj: Named<T>): T {
  const { name, ...metadata } = obj.metadata;
  return { ...obj, metadata: { ...metadata, generateName: `${name}-` } };
}

/** The refusal that holds the revision, or undefined when the apiserver would accept its replacement. */
async function dryRunReplacement(dryRun: DryRunCreator, namespace: string, replacement: Replacement, log: Logger): Promise<Refusal | undefined> {
  try {
    await dryRun.pod(namespace, generated(replacement.pod));
    for (const claim of replacement.claims) await dryRun.claim(namespace, generated(claim));
    return undefined;
  } catch (err) {
    if (!isKubeError(err)) throw err;
    if (err.code === 'QuotaExceeded') return undefined;
    if (err.code === 'DryRunUnsupported') {
      log.warn({ revision: replacement.revision, err: err.detail }, 'a webhook cannot take part in a dry run: pods are replaced unchecked');
      return undefined;
    }
    if (err.retryClass === 'permanent') return { code: err.code, message: err.detail };
    throw err;
  }
}

/**
 * Remembers as accepted the replacements a live pod vouches for: a pod this App controls, not terminating, at
 * the replacement's revision, was admitted when it was created, as its replacement would be now unless the
 * cluster's policies changed since (what the verdict's TTL, counted from the pod's creation, bounds). Only a
 * replacement that creates no claim: the pod's claims were not created with it.
 */
export function vouchByPods(verdicts: AdmissionVerdicts, app: Stored<App>, pods: readonly Stored<Pod>[], replacements: readonly Replacement[]): void {
  for (const replacement of replacements) {
    if (replacement.claims.length > 0) continue;
    const created = pods
      .filter((p) => !isTerminating(p) && isControlledBy(p.metadata, app.metadata.uid) && getPodRevision(p) === replacement.revision)
      .map((p) => Date.parse(p.metadata.creationTimestamp ?? ''))
      .filter((t) => Number.isFinite(t));
    if (created.length > 0) verdicts.remember(verdictKey(app, replacement), Math.max(...created));
  }
}

/** Dry-runs the replacements not yet known to be accepted; returns the refused revisions (undefined when none). */
export async function findRefusals(
  dryRun: DryRunCreator,
  app: Stored<App>,
  replacements: readonly Replacement[],
  verdicts: AdmissionVerdicts,
  log: Logger,
): Promise<Refusals | undefined> {
  const refused = new Map<string, Refusal>();
  for (const replacement of replacements) {
    const key = verdictKey(app, replacement);
    if (verdicts.isAccepted(key)) continue;
    const refusal = await dryRunReplacement(dryRun, app.metadata.namespace, replacement, log);
    if (refusal) {
      refused.set(replacement.revision, refusal);
      log.info({ revision: replacement.revision, refusal }, 'replacement pods would be refused: the rollout is held');
    } else verdicts.remember(key);
  }
  return refused.size > 0 ? refused : undefined;
}
