import { describe, expect, it } from 'vitest';
import { Annotation, Label } from '../../api/keys.ts';
import { InPlaceError, pointer, resizePatch, specPatch, statusPatch } from './patches.ts';
import type { Pod } from '../../kube/types.ts';

function pod(meta: Partial<Pod['metadata']> = {}): Pod {
  return {
    metadata: { name: 'web-0', resourceVersion: '42', labels: { a: '1' }, ...meta },
    spec: {
      initContainers: [{ name: 'init', image: 'i:1' }],
      containers: [
        { name: 'app', image: 'x:1' },
        { name: 'log', image: 'l:1' },
      ],
    },
  };
}

describe('specPatch', () => {
  it('guards with the resourceVersion read, replaces images by index, sets labels and the state annotation', () => {
    const ops = specPatch(pod({ annotations: { keep: 'x' } }), {
      kind: 'patchSpec',
      batch: 0,
      images: [
        { container: 'log', image: 'l:2' },
        { container: 'init', image: 'i:2', init: true },
      ],
      labels: { a: null, 'example.com/b': '2' },
      annotations: { keep: null },
      revisionLabel: 'web-b',
      annotation: '{}',
    });
    expect(ops).toEqual([
      { op: 'replace', path: '/metadata/resourceVersion', value: '42' },
      { op: 'replace', path: '/spec/containers/1/image', value: 'l:2' },
      { op: 'replace', path: '/spec/initContainers/0/image', value: 'i:2' },
      { op: 'remove', path: '/metadata/labels/a' },
      { op: 'add', path: '/metadata/labels/example.com~1b', value: '2' },
      { op: 'add', path: `/metadata/labels/${pointer(Label.revision)}`, value: 'web-b' },
      { op: 'add', path: `/metadata/labels/${pointer(Label.controllerRevisionHash)}`, value: 'web-b' },
      { op: 'remove', path: '/metadata/annotations/keep' },
      { op: 'add', path: `/metadata/annotations/${pointer(Annotation.inPlaceUpdateState)}`, value: '{}' },
    ]);
  });

  it('creates a missing map and never removes what is not there', () => {
    const ops = specPatch(pod(), { kind: 'patchSpec', batch: 0, images: [], labels: {}, annotations: { gone: null, x: 'y' } });
    expect(ops.slice(1)).toEqual([{ op: 'add', path: '/metadata/annotations', value: { x: 'y' } }]);
  });

  it.each([
    ['an unknown container', pod(), 'ContainerNotFound'],
    ['a pod without resourceVersion', pod({ resourceVersion: undefined }), 'NoResourceVersion'],
  ])('fails with a typed error for %s', (_n, p, code) => {
    const call = () => specPatch(p, { kind: 'patchSpec', batch: 0, images: [{ container: 'nope', image: 'n:1' }], labels: {}, annotations: {} });
    expect(call).toThrow(InPlaceError);
    expect(call).toThrow(expect.objectContaining({ code }) as Error);
  });
});

describe('status and resize bodies', () => {
  const condition = { type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate' };
  it.each<[string, string | null | undefined, object]>([
    ['sets the state', 's', { resourceVersion: '42', annotations: { [Annotation.inPlaceUpdateState]: 's' } }],
    ['removes the state', null, { resourceVersion: '42', annotations: { [Annotation.inPlaceUpdateState]: null } }],
    ['leaves annotations alone', undefined, { resourceVersion: '42' }],
  ])('status patch %s', (_n, annotation, metadata) => {
    expect(statusPatch(pod(), annotation, condition)).toEqual({ metadata, status: { conditions: [condition] } });
  });

  it('resize patch merges resources by container name', () => {
    const resources = { requests: { cpu: '1' } };
    expect(resizePatch(pod(), { kind: 'resize', containers: [{ name: 'app', resources }] })).toEqual({
      metadata: { resourceVersion: '42' },
      spec: { containers: [{ name: 'app', resources }] },
    });
  });
});
