import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import type * as Protobufjs from 'protobufjs';
import { POD_PROTO } from '../kube/protobuf/codec.ts';
import { POD_SHAPE, projectApp, projectPod } from './project.ts';

const protobuf = createRequire(import.meta.url)('protobufjs') as typeof Protobufjs;

type Shape = typeof POD_SHAPE;
/** Messages whose fields are printed in their parent (`json:",inline"`, as codec.ts prints them). */
const INLINE = new Set(['volumeSource']);
/** Messages the JSON encoding prints as a scalar (a string) or a map. */
const LEAVES = new Set(['Time', 'Quantity']);

/** pod.proto's fields of `type`, as a shape: what the view must keep for the planner to read all ebb decodes. */
function protoShape(type: Protobufjs.Type): Shape {
  const out: Record<string, Shape> = {};
  for (const f of type.fieldsArray) {
    const inner = f.resolve().resolvedType;
    const leaf = f.map || !(inner instanceof protobuf.Type) || LEAVES.has(inner.name);
    const shape: Shape = leaf ? true : protoShape(inner);
    if (INLINE.has(f.name) && typeof shape === 'object' && !Array.isArray(shape)) Object.assign(out, shape);
    else out[f.name] = f.repeated && !leaf ? [shape] : shape;
  }
  return out;
}

describe('the view projection', () => {
  it('keeps every field pod.proto declares (what ebb reads of a pod), and only those', () => {
    const root = protobuf.loadSync(POD_PROTO);
    const expected = protoShape(root.lookupType('Pod'));
    const { apiVersion: _a, kind: _k, ...shape } = POD_SHAPE as Record<string, Shape>;
    expect(shape).toEqual(expected);
  });

  it('drops what no plan reads of a pod (managedFields, affinity, env) and keeps what it does', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-0',
        uid: 'u',
        resourceVersion: '7',
        labels: { a: 'b' },
        managedFields: [{ manager: 'kubelet' }],
        ownerReferences: [{ apiVersion: 'apps.ebb.dev/v1', kind: 'App', name: 'web', uid: 'x', controller: true }],
      },
      spec: {
        affinity: { nodeAffinity: {} },
        containers: [{ name: 'main', image: 'web:1', env: [{ name: 'A', value: 'b' }], resources: { requests: { cpu: '1' } } }],
      },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
    };
    expect(projectPod(pod)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-0', uid: 'u', resourceVersion: '7', labels: { a: 'b' }, ownerReferences: pod.metadata.ownerReferences },
      spec: { containers: [{ name: 'main', image: 'web:1', resources: { requests: { cpu: '1' } } }] },
      status: pod.status,
    });
  });

  it('keeps an App whole but for its managedFields', () => {
    const app = {
      apiVersion: 'apps.ebb.dev/v1',
      kind: 'App',
      metadata: { name: 'web', managedFields: [{ manager: 'ebb' }], generation: 3 },
      spec: { replicas: 3 },
      status: { replicas: 1 },
    };
    expect(projectApp(app)).toEqual({
      apiVersion: 'apps.ebb.dev/v1',
      kind: 'App',
      metadata: { name: 'web', generation: 3 },
      spec: { replicas: 3 },
      status: { replicas: 1 },
    });
  });
});
