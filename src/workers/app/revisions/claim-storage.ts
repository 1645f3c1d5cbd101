/** What a revision records of the App's claim templates (their storage requests), and how a template's request is read. */
import type { App } from '../../../api/app.ts';
import type { PersistentVolumeClaimTemplate } from '../../../api/pod-template.ts';
import { growsClaimsOnRollingUpdate } from '../../../api/volume-claim-update.ts';
import type { Stored } from '../../../kube/types.ts';

/** A claim template's storage request, as a revision records it. */
export interface ClaimStorage {
  name: string;
  storage: string;
}

export function storageOf(t: PersistentVolumeClaimTemplate): string | undefined {
  const value = t.spec.resources?.requests?.['storage'];
  return value === undefined ? undefined : String(value);
}

/**
 * What a revision records of the claim templates: their storage requests, under OnPodRollingUpdate only, so
 * that a larger request is a new revision that the rolling update rolls out pod by pod. Under OnDelete
 * nothing (revisions, and so pods, are as they were before volume growth existed).
 */
export function revisionClaims(app: Stored<App>): { volumeClaimTemplates?: ClaimStorage[] } {
  if (!growsClaimsOnRollingUpdate(app.spec.volumeClaimUpdateStrategy)) return {};
  const claims = (app.spec.volumeClaimTemplates ?? []).flatMap((t) => {
    const storage = storageOf(t);
    return storage === undefined ? [] : [{ name: t.metadata.name, storage }];
  });
  return claims.length > 0 ? { volumeClaimTemplates: claims } : {};
}
