import { describe, expect, it } from 'vitest';
import { makeApp, podFor } from '../../../../test/unit/app/fixtures.ts';
import { EventReason } from '../../../api/keys.ts';
import type { OwnerReference, Pod, Stored } from '../../../kube/types.ts';
import { nameHolder } from './release.ts';

const app = makeApp('web');
const other: OwnerReference = { apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'cm' };

function withMeta(pod: Stored<Pod>, labels: Record<string, string>, ownerReferences: OwnerReference[]): Stored<Pod> {
  return { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, ...labels }, ownerReferences } };
}

describe('nameHolder (who holds the name of a pod the App creates)', () => {
  const ours = podFor(app, 1, 'r1');
  const ourRef = ours.metadata.ownerReferences ?? [];
  const foreignRef: OwnerReference = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'sts', controller: true };
  it.each([
    ['gone since the create', undefined, 'gone'],
    ['the App controls it and it matches: a racing reconcile made it', ours, 'ours'],
    ['the App controls it and it left the selector', withMeta(ours, { app: 'elsewhere' }, [other, ...ourRef]), 'release'],
    ['an orphan that left the selector', withMeta(ours, { app: 'elsewhere' }, []), 'foreign'],
    ['an orphan that matches (adopted by the next plan, not here)', withMeta(ours, {}, []), 'foreign'],
    ['another controller', withMeta(ours, {}, [foreignRef]), 'foreign'],
  ] as const)('%s → %s', (_, pod, kind) => {
    expect(nameHolder(app, pod).kind).toBe(kind);
  });

  it('a release removes only the App reference, on the pod as read, and says so in an Event', () => {
    const pod = withMeta(ours, { app: 'elsewhere' }, [other, ...ourRef]);
    const holder = nameHolder(app, pod);
    if (holder.kind !== 'release') throw new Error(`expected a release, got ${holder.kind}`);
    expect(holder.patch).toEqual({ metadata: { uid: pod.metadata.uid, resourceVersion: pod.metadata.resourceVersion, ownerReferences: [other] } });
    expect(holder.event).toMatchObject({ type: 'Normal', reason: EventReason.releasedPod, related: { kind: 'Pod', name: 'web-1', uid: pod.metadata.uid } });
  });

  it('an App being deleted keeps its pods (the garbage collector takes them with it)', () => {
    const deleting = makeApp('web', {}, { deletionTimestamp: '2025-01-01T00:00:00Z' });
    const pod = withMeta(podFor(deleting, 1, 'r1'), { app: 'elsewhere' }, podFor(deleting, 1, 'r1').metadata.ownerReferences ?? []);
    expect(nameHolder(deleting, pod).kind).toBe('ours');
  });
});
