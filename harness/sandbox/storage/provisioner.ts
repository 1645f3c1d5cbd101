/**
 * The sandbox's dynamic provisioner: makes sure its StorageClasses exist (the default `standard`, binding
 * `WaitForFirstConsumer`, and `standard-immediate`), creates a hostPath PV under `<dir>/volumes/` for every
 * pending PVC of a class it provisions (for a WaitForFirstConsumer class once kube-scheduler has written the
 * selected node into the claim, pinning the PV to that node), and deletes released PVs (reclaim policy
 * Delete) together with their directories. kube-controller-manager's persistentvolume-binder does the
 * binding, as with any external provisioner. It is also the volume resizer: a bound claim whose request grew past
 * its capacity (which the apiserver admits only when the class has allowVolumeExpansion) gets its PV's
 * capacity raised and then its status written as for a volume that needs no node expansion.
 */
import { mkdir, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join, resolve } from 'node:path';
import { errorMessage } from '../../../src/common/errors.ts';
import type { Logger } from '../../../src/common/log.ts';
import { isKubeError } from '../../../src/kube/errors.ts';
import { core, type ResourceRef } from '../../../src/kube/paths.ts';
import { PatchType, type KubeRest } from '../../../src/kube/rest.ts';
import { listWatch } from '../../../src/kube/watch.ts';
import {
  fixedSizeStorageClass,
  needsVolume,
  PROVISIONER,
  selectedNode,
  shouldDelete,
  storageClasses,
  volumeFor,
  volumeNameFor,
  type BindingMode,
  type Claim,
  type Volume,
} from './pv-plan.ts';
import { pendingResize, resizeFinished, resizeStarted } from './resize-plan.ts';

export interface ProvisionerOptions {
  rest: KubeRest;
  dir: string;
  log: Logger;
  signal: AbortSignal;
}

/** How long the simulated volume expansion takes: longer than the worker's recheck of a resizing claim, so the wait is exercised. */
const RESIZE_MS = 5_000;

const classesRef: ResourceRef = { group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses' };

interface StorageClassObject {
  metadata: { name: string };
  provisioner?: string;
  volumeBindingMode?: BindingMode;
}

export async function startProvisioner(opts: ProvisionerOptions): Promise<{ stop(): Promise<void> }> {
  const { rest, log } = opts;
  const volumesDir = join(resolve(opts.dir), 'volumes');
  await mkdir(volumesDir, { recursive: true });
  const abort = new AbortController();
  const signal = AbortSignal.any([opts.signal, abort.signal]);
  for (const sc of [...storageClasses(), fixedSizeStorageClass()]) {
    await rest.create(classesRef, sc, {}, signal).catch((err: unknown) => {
      if (!isKubeError(err, 'AlreadyExists')) throw err;
    });
  }

  const classes = new Map<string, BindingMode>();
  const pending = new Map<string, Claim>();

  const provision = async (claim: Claim): Promise<void> => {
    if (!needsVolume(claim, classes)) return;
    const pv = volumeFor(claim, volumesDir);
    try {
      await mkdir(join(volumesDir, volumeNameFor(claim)), { recursive: true });
      await rest.create(core('persistentvolumes'), pv, {}, signal);
      const node = selectedNode(claim);
      log.info({ claim: `${claim.metadata.namespace}/${claim.metadata.name}`, volume: volumeNameFor(claim), node }, 'volume provisioned');
    } catch (err) {
      if (isKubeError(err, 'AlreadyExists') || signal.aborted) return;
      log.warn({ claim: claim.metadata.name, error: errorMessage(err) }, 'provisioning failed; will retry on the next claim update');
    }
  };

  const reclaim = async (pv: Volume): Promise<void> => {
    if (!shouldDelete(pv)) return;
    try {
      const path = pv.spec.hostPath?.path;
      if (path?.startsWith(`${volumesDir}/`)) await rm(path, { recursive: true, force: true });
      await rest.delete(core('persistentvolumes', undefined, pv.metadata.name), {}, signal);
      log.info({ volume: pv.metadata.name }, 'released volume deleted');
    } catch (err) {
      if (isKubeError(err, 'NotFound') || signal.aborted) return;
      log.warn({ volume: pv.metadata.name, error: errorMessage(err) }, 'deleting a released volume failed');
    }
  };

  const resizing = new Set<string>();
  const resize = async (claim: Claim): Promise<void> => {
    const size = pendingResize(claim, classes);
    const volume = claim.spec.volumeName;
    if (size === undefined || volume === undefined || resizing.has(claim.metadata.uid)) return;
    resizing.add(claim.metadata.uid);
    const { namespace, name } = claim.metadata;
    const status = core('persistentvolumeclaims', namespace, name, 'status');
    try {
      await rest.patch(status, resizeStarted(size), PatchType.merge, {}, signal);
      // A resize takes a while on real storage: long enough that tests see a claim asking for more than it has.
      await sleep(RESIZE_MS, undefined, { signal });
      await rest.patch(core('persistentvolumes', undefined, volume), { spec: { capacity: { storage: size } } }, PatchType.merge, {}, signal);
      await rest.patch(status, resizeFinished(size), PatchType.merge, {}, signal);
      log.info({ claim: `${namespace}/${name}`, volume, size }, 'volume expanded');
    } catch (err) {
      if (signal.aborted) return;
      log.warn({ claim: name, error: errorMessage(err) }, 'expanding a volume failed; will retry on the next claim update');
    } finally {
      resizing.delete(claim.metadata.uid);
    }
  };

  const onClaim = async (claim: Claim, deleted: boolean): Promise<void> => {
    const key = claim.metadata.uid;
    if (deleted || claim.spec.volumeName) pending.delete(key);
    else pending.set(key, claim);
    if (!deleted) {
      await provision(claim);
      // In the background: a resize takes a while and must not hold up other claims.
      void resize(claim);
    }
  };

  const onClass = async (sc: StorageClassObject, deleted: boolean): Promise<void> => {
    if (deleted || sc.provisioner !== PROVISIONER) classes.delete(sc.metadata.name);
    else if (!classes.has(sc.metadata.name)) {
      classes.set(sc.metadata.name, sc.volumeBindingMode ?? 'Immediate');
      for (const claim of pending.values()) await provision(claim);
    }
  };

  const watches = [
    listWatch<StorageClassObject & { metadata: { name: string } }>(
      { rest, ref: classesRef, signal, log },
      {
        async onList(items) {
          classes.clear();
          for (const sc of items) await onClass(sc, false);
        },
        onEvent: (ev) => onClass(ev.object, ev.type === 'DELETED'),
      },
    ),
    listWatch<Claim>(
      { rest, ref: core('persistentvolumeclaims'), signal, log },
      {
        async onList(items) {
          pending.clear();
          for (const claim of items) await onClaim(claim, false);
        },
        onEvent: (ev) => onClaim(ev.object, ev.type === 'DELETED'),
      },
    ),
    listWatch<Volume>(
      { rest, ref: core('persistentvolumes'), signal, log },
      {
        async onList(items) {
          for (const pv of items) await reclaim(pv);
        },
        onEvent: (ev) => (ev.type === 'DELETED' ? undefined : reclaim(ev.object)),
      },
    ),
  ].map((p) => p.catch(() => undefined));

  return {
    async stop() {
      abort.abort();
      await Promise.all(watches);
    },
  };
}
