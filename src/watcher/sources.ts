import { appRef, imageListRef } from '../api/group.ts';
import { Label } from '../api/keys.ts';
import { core } from '../kube/paths.ts';
import { appKey, entryOwnerKeys, imageListKey, podOwnerKey } from './keys.ts';
import { nodeSource } from './node-source.ts';
import { pullJobSource } from './pull-job-sources.ts';
import { podDigest } from './pod-digest.ts';
import { appSettled } from './settled.ts';
import type { KnownKeys } from './known-keys.ts';
import type { SourceSpec } from './source-spec.ts';
import { observers, WarmPools, type AppObserver } from './warm-pools.ts';

export { runSource } from './run-source.ts';
export { KnownKeys, knownValue } from './known-keys.ts';
export type { Sink, SourceSpec, SourceState } from './source-spec.ts';

/** The watch sources for a namespace set (empty = all namespaces); `known` lets Node events reach the open pull jobs. */
export function sourceSpecs(namespaces: readonly string[], appStates?: AppObserver, known?: KnownKeys, pools = new WarmPools()): SourceSpec[] {
  const scopes: (string | undefined)[] = namespaces.length > 0 ? [...namespaces] : [undefined];
  const specs: SourceSpec[] = [];
  const states = observers(appStates, pools);
  for (const ns of scopes) {
    const suffix = ns ? `/${ns}` : '';
    specs.push({
      name: `apps${suffix}`,
      ref: appRef(ns),
      keyOf: appKey,
      tracked: true,
      ignoreStatusOnly: true,
      settledOf: appSettled,
      releasesPodHolds: true,
      states,
      view: 'app',
    });
    specs.push({
      name: `pods${suffix}`,
      ref: core('pods', ns),
      labelSelector: Label.app,
      keyOf: podOwnerKey,
      tracked: false,
      digestOf: podDigest,
      ownerSource: `apps${suffix}`,
      view: 'pod',
    });
    specs.push(pullJobSource(ns));
  }
  specs.push({ name: 'imagelists', ref: imageListRef(), keyOf: imageListKey, tracked: true, relatedKeys: (o) => entryOwnerKeys(o, namespaces) });
  specs.push(nodeSource(pools, known));
  return specs;
}
