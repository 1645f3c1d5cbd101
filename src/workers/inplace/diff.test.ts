import { describe, expect, it } from 'vitest';
import type { PodTemplateSpec } from '../../api/pod-template.ts';
import { canUpdateInPlace, displayPath } from './diff.ts';
import type { TemplateLike } from './types.ts';

type Template = TemplateLike & { spec: Record<string, unknown> };

const burstable = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
const guaranteed = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } };

function base(): Template {
  return {
    metadata: { labels: { app: 'web', tier: 'front' }, annotations: { note: 'a' } },
    spec: {
      initContainers: [{ name: 'init', image: 'busybox:1.36' }],
      containers: [
        { name: 'app', image: 'nginx:1.25', env: [{ name: 'A', value: '1' }], resources: structuredClone(burstable) },
        { name: 'log', image: 'fluent:1.0' },
      ],
    },
  };
}

function edit(change: (t: Template & { spec: { containers: Record<string, unknown>[]; initContainers: Record<string, unknown>[] } }) => void): Template {
  const t = base() as Template & { spec: { containers: Record<string, unknown>[]; initContainers: Record<string, unknown>[] } };
  change(t);
  return t;
}

describe('canUpdateInPlace', () => {
  it.each<[string, Template, { images?: unknown[]; labels?: unknown; annotations?: unknown; resources?: unknown[] }]>([
    ['nothing changed', base(), { images: [], labels: {}, annotations: {}, resources: [] }],
    ['one container image', edit((t) => (t.spec.containers[0]!.image = 'nginx:1.26')), { images: [{ container: 'app', image: 'nginx:1.26' }] }],
    [
      'two images, an init container among them',
      edit((t) => {
        t.spec.containers[1]!.image = 'fluent:2.0';
        t.spec.initContainers[0]!.image = 'busybox:1.37';
      }),
      {
        images: [
          { container: 'log', image: 'fluent:2.0' },
          { container: 'init', image: 'busybox:1.37', init: true },
        ],
      },
    ],
    [
      'a label added and one changed',
      edit((t) => (t.metadata!.labels = { app: 'web', tier: 'back', canary: 'yes' })),
      { labels: { tier: 'back', canary: 'yes' }, images: [] },
    ],
    ['a label removed', edit((t) => (t.metadata!.labels = { app: 'web' })), { labels: { tier: null } }],
    ['annotations removed entirely', edit((t) => delete t.metadata!.annotations), { annotations: { note: null } }],
    ['a key with a slash', edit((t) => (t.metadata!.annotations = { note: 'a', 'example.com/x': 'y' })), { annotations: { 'example.com/x': 'y' } }],
    [
      'metadata added where there was none',
      edit((t) => (t.metadata = { labels: { app: 'web', tier: 'front', x: '1' } })),
      { labels: { x: '1' }, annotations: { note: null } },
    ],
    [
      'cpu raised, QoS stays Burstable',
      edit((t) => (t.spec.containers[0]!.resources = { requests: { cpu: '150m', memory: '64Mi' }, limits: { cpu: '300m', memory: '128Mi' } })),
      { resources: [{ container: 'app', resources: { requests: { cpu: '150m', memory: '64Mi' }, limits: { cpu: '300m', memory: '128Mi' } } }] },
    ],
    [
      'the same quantity spelled differently',
      edit((t) => (t.spec.containers[0]!.resources = { ...burstable, requests: { cpu: '0.1', memory: '64Mi' } })),
      { resources: [] },
    ],
    [
      'a limit added to a container without resources, QoS stays Burstable',
      edit((t) => (t.spec.containers[1]!.resources = { limits: { memory: '1Gi' } })),
      { resources: [{ container: 'log', resources: { limits: { memory: '1Gi' } } }] },
    ],
    [
      'image, label and cpu together',
      edit((t) => {
        t.spec.containers[0]!.image = 'nginx:1.27';
        t.metadata!.labels = { app: 'web', tier: 'x' };
        t.spec.containers[0]!.resources = { ...burstable, limits: { cpu: '400m', memory: '128Mi' } };
      }),
      {
        images: [{ container: 'app', image: 'nginx:1.27' }],
        labels: { tier: 'x' },
        resources: [{ container: 'app', resources: { ...burstable, limits: { cpu: '400m', memory: '128Mi' } } }],
      },
    ],
  ])('in place: %s', (_name, next, expected) => {
    const r = canUpdateInPlace(base(), next, { resizeSupported: true });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    if (expected.images) expect(r.plan.images).toEqual(expected.images);
    if (expected.labels) expect(r.plan.metadata.labels).toEqual(expected.labels);
    if (expected.annotations) expect(r.plan.metadata.annotations).toEqual(expected.annotations);
    if (expected.resources) expect(r.plan.resources).toEqual(expected.resources);
  });

  it.each<[string, Template, string, RegExp, boolean?]>([
    ['an env change', edit((t) => (t.spec.containers[0]!.env = [{ name: 'A', value: '2' }])), '/spec/containers/0/env/0/value', /env\[0\]\.value changed/],
    ['a port added', edit((t) => (t.spec.containers[1]!.ports = [{ containerPort: 80 }])), '/spec/containers/1/ports', /ports added/],
    ['a container added', edit((t) => t.spec.containers.push({ name: 'new', image: 'x:1' })), '/spec/containers/2', /containers\[2\] added/],
    ['a container removed', edit((t) => t.spec.containers.pop()), '/spec/containers/1', /removed/],
    ['containers reordered', edit((t) => t.spec.containers.reverse()), '/spec/containers/0/env', /./],
    ['a command', edit((t) => (t.spec.containers[0]!.command = ['sh'])), '/spec/containers/0/command', /command added/],
    ['a volume', edit((t) => (t.spec.volumes = [{ name: 'v', emptyDir: {} }])), '/spec/volumes', /spec\.volumes added/],
    ['tolerations', edit((t) => (t.spec.tolerations = [{ key: 'k', operator: 'Exists' }])), '/spec/tolerations', /./],
    ['other template metadata', edit((t) => (t.metadata!.finalizers = ['x'])), '/metadata/finalizers', /metadata\.finalizers added/],
    [
      'a restart stamp added',
      edit((t) => (t.metadata!.annotations = { note: 'a', 'kubectl.kubernetes.io/restartedAt': '2026-11-25T05:00:00Z' })),
      '/metadata/annotations/kubectl.kubernetes.io~1restartedAt',
      /^a restart was asked \(kubectl\.kubernetes\.io\/restartedAt added\)/,
    ],
    [
      'an init container resource',
      edit((t) => (t.spec.initContainers[0]!.resources = { limits: { cpu: '1' } })),
      '/spec/initContainers/0/resources/limits/cpu',
      /initContainers\[0\]\.resources\.limits\.cpu added/,
    ],
    [
      'ephemeral storage',
      edit((t) => (t.spec.containers[0]!.resources = { ...burstable, limits: { ...burstable.limits, 'ephemeral-storage': '1Gi' } })),
      '/spec/containers/0/resources/limits/ephemeral-storage',
      /./,
    ],
    [
      'a resize policy',
      edit((t) => (t.spec.containers[0]!.resizePolicy = [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }])),
      '/spec/containers/0/resizePolicy',
      /./,
    ],
    [
      'a limit removed',
      edit((t) => (t.spec.containers[0]!.resources = { requests: burstable.requests, limits: { memory: '128Mi' } })),
      '/spec/containers/0/resources/limits/cpu',
      /cannot unset/,
    ],
    [
      'Burstable to Guaranteed',
      edit((t) => {
        delete (t.spec as { initContainers?: unknown }).initContainers;
        t.spec.containers[0]!.resources = structuredClone(guaranteed);
        t.spec.containers[1]!.resources = structuredClone(guaranteed);
      }),
      '/spec/initContainers',
      /spec\.initContainers removed/,
    ],
    [
      'any resources without pods/resize',
      edit((t) => (t.spec.containers[0]!.resources = { ...burstable, limits: { cpu: '1', memory: '128Mi' } })),
      '/spec/containers/0/resources/limits/cpu',
      /./,
      false,
    ],
  ])('not in place: %s', (_name, next, path, reason, resizeSupported = true) => {
    const r = canUpdateInPlace(base(), next, { resizeSupported });
    expect(r).toMatchObject({ ok: false, path });
    if (!r.ok) expect(r.reason).toMatch(reason);
  });

  it('refuses a resize that turns Burstable into Guaranteed', () => {
    const old: Template = {
      spec: {
        containers: [
          { name: 'a', image: 'x:1', resources: burstable },
          { name: 'b', image: 'y:1', resources: guaranteed },
        ],
      },
    };
    const next: Template = {
      spec: {
        containers: [
          { name: 'a', image: 'x:1', resources: guaranteed },
          { name: 'b', image: 'y:1', resources: guaranteed },
        ],
      },
    };
    expect(canUpdateInPlace(old, next, { resizeSupported: true })).toEqual({
      ok: false,
      path: '/spec/containers/0/resources',
      reason: 'QoS class would change from Burstable to Guaranteed: a resize must keep it',
    });
  });

  it('turns BestEffort into Burstable: not in place', () => {
    const old: Template = { spec: { containers: [{ name: 'a', image: 'x:1' }] } };
    const next: Template = { spec: { containers: [{ name: 'a', image: 'x:1', resources: { requests: { cpu: '100m' } } }] } };
    expect(canUpdateInPlace(old, next, { resizeSupported: true })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/BestEffort to Burstable/) as unknown,
    });
  });

  it('accepts the App API template type', () => {
    const t: PodTemplateSpec = { spec: { containers: [{ name: 'a', image: 'x:1' }] } };
    expect(canUpdateInPlace(t, { spec: { containers: [{ name: 'a', image: 'x:2' }] } }, { resizeSupported: false }).ok).toBe(true);
  });
});

describe('displayPath', () => {
  it.each([
    ['/spec/containers/0/env', 'spec.containers[0].env'],
    ['/metadata/annotations/example.com~1x', 'metadata.annotations.example.com/x'],
    ['/spec/volumes', 'spec.volumes'],
  ])('%s → %s', (p, d) => expect(displayPath(p)).toBe(d));
});
