/**
 * The CRDs in deploy/crds, installed into a real kube-apiserver: they are Established, kubectl prints their
 * columns, valid objects are accepted and defaulted, and invalid ones are rejected with a clear message.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/api/app.ts';
import { mergePatch } from '../../harness/fakes/store.ts';
import { API_VERSION, APP_CRD_NAME, APP_KIND, IMAGE_LIST_CRD_NAME, IMAGE_LIST_KIND, appRef, imageListRef } from '../../src/api/group.ts';
import type { ImageList } from '../../src/api/image-list.ts';
import { PatchType } from '../../src/kube/rest.ts';
import { freshNamespace, rejection, sandbox } from './support.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const KUBECTL = join(ROOT, 'bin', 'kubectl');
const run = promisify(execFile);

type Obj = Record<string, unknown>;

function validApp(name: string): Obj {
  return {
    apiVersion: API_VERSION,
    kind: APP_KIND,
    metadata: { name },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: name } },
      serviceName: name,
      template: {
        metadata: { labels: { app: name, tier: 'web' } },
        spec: { containers: [{ name: 'main', image: 'registry.example.com/team/web:v1', ports: [{ containerPort: 8080 }] }] },
      },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: { maxUnavailable: '25%', canary: { steps: [{ replicas: 1 }, { pause: {} }, { replicas: '50%' }, { pause: { duration: '90s' } }] } },
      },
    },
  };
}

function validImageList(name: string): Obj {
  return {
    apiVersion: API_VERSION,
    kind: IMAGE_LIST_KIND,
    metadata: { name },
    spec: { images: [{ image: 'registry.example.com/team/web:v2' }, { image: 'nginx:1.27', alwaysPull: true, repullIntervalSeconds: 3600 }] },
  };
}

const uniqueName = (prefix: string): string => `${prefix}-${randomBytes(3).toString('hex')}`;

const rest = () => sandbox().rest;

describe('CRDs in deploy/crds', () => {
  let ns: string;
  beforeAll(async () => {
    ns = await freshNamespace('crd');
  });

  it.each([APP_CRD_NAME, IMAGE_LIST_CRD_NAME])('%s is Established', async (name) => {
    const crd = await rest().get<{ status?: { conditions?: { type: string; status: string }[] } }>({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      resource: 'customresourcedefinitions',
      name,
    });
    expect(crd.status?.conditions).toContainEqual(expect.objectContaining({ type: 'Established', status: 'True' }));
    expect(crd.status?.conditions?.find((c) => c.type === 'NonStructuralSchema')).toBeUndefined();
  });

  it('kubectl get prints the App columns, by full name, short name and category', async () => {
    const name = uniqueName('cols');
    await rest().create(appRef(ns), validApp(name));
    for (const resource of ['apps.apps.ebb.dev', 'ebapp', 'ebb']) {
      const { stdout } = await run(KUBECTL, ['--kubeconfig', sandbox().kubeconfig, 'get', resource, '-n', ns]);
      // The category `ebb` also lists ImageLists (cluster-scoped), as a second table with its own header.
      const lines = stdout.trim().split('\n');
      const header = lines.find((l) => l.startsWith('NAME') && l.includes('DESIRED'));
      expect(header?.trim().split(/\s+/)).toEqual(['NAME', 'DESIRED', 'READY', 'UPDATED', 'AVAILABLE', 'REVISION', 'PAUSED', 'HELD', 'AGE']);
      const row = lines.find((l) => l.split(/\s+/)[0]?.endsWith(name));
      expect(row?.trim().split(/\s+/).slice(1, 3)).toEqual(['3', 'false']);
    }
  });

  it('kubectl get -o wide prints the ImageList columns', async () => {
    const name = uniqueName('node');
    await rest().create(imageListRef(), validImageList(name));
    await rest().patch(
      imageListRef(name, 'status'),
      {
        status: {
          observedGeneration: 1,
          images: [
            { image: 'nginx:1.27', phase: 'Failed', message: 'not found' },
            { image: 'busybox:1.36', phase: 'Deferred', message: 'image filesystem /var/lib/containerd is 83% used' },
          ],
        },
      },
      PatchType.merge,
    );
    const { stdout } = await run(KUBECTL, ['--kubeconfig', sandbox().kubeconfig, 'get', 'imagelists.apps.ebb.dev', name, '-o', 'wide']);
    const [header, row] = stdout.trim().split('\n');
    expect(header?.trim().split(/\s+/)).toEqual(['NAME', 'FAILED', 'DEFERRED', 'AGE', 'GENERATION', 'OBSERVED']);
    expect(row?.trim().split(/\s+/)).toEqual([name, 'nginx:1.27', 'busybox:1.36', expect.stringMatching(/^\d+s$/), '1', '1']);
    await rest().delete(imageListRef(name));
  });

  it('accepts a valid App and applies the StatefulSet defaults', async () => {
    const created = await rest().create<App>(appRef(ns), validApp(uniqueName('ok')));
    expect(created.spec).toMatchObject({
      podManagementPolicy: 'OrderedReady',
      revisionHistoryLimit: 10,
      minReadySeconds: 0,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, paused: false, podUpdatePolicy: 'ReCreate', maxUnavailable: '25%' } },
    });
    expect(created.spec.updateStrategy?.rollingUpdate?.canary?.steps).toEqual([
      { replicas: 1 },
      { pause: {} },
      { replicas: '50%' },
      { pause: { duration: '90s' } },
    ]);
    // Every container field is typed with the core/v1 schema, and its defaults apply (protocol TCP).
    expect(created.spec.template.spec.containers[0]).toMatchObject({ ports: [{ containerPort: 8080, protocol: 'TCP' }] });
  });

  it('defaults a minimal App', async () => {
    const app = mergePatch(validApp(uniqueName('min')), {
      spec: { replicas: null, serviceName: null, volumeClaimTemplates: null, updateStrategy: null },
    });
    const created = await rest().create<App>(appRef(ns), app);
    expect(created.spec).toMatchObject({ replicas: 1, updateStrategy: { type: 'RollingUpdate' }, podManagementPolicy: 'OrderedReady' });
    expect(created.spec.updateStrategy?.rollingUpdate).toBeUndefined();
  });

  it('accepts a valid ImageList and applies defaults', async () => {
    const name = uniqueName('node');
    const created = await rest().create<ImageList>(imageListRef(), validImageList(name));
    expect(created.spec?.images).toEqual([
      { image: 'registry.example.com/team/web:v2', alwaysPull: false, repullIntervalSeconds: 86400 },
      { image: 'nginx:1.27', alwaysPull: true, repullIntervalSeconds: 3600 },
    ]);
    await rest().delete(imageListRef(name));
  });

  it('serves the scale subresource from spec.replicas and status', async () => {
    const name = uniqueName('scale');
    await rest().create(appRef(ns), validApp(name));
    await rest().patch(appRef(ns, name, 'status'), { status: { replicas: 2, labelSelector: `app=${name}` } }, PatchType.merge);
    await rest().patch(appRef(ns, name, 'scale'), { spec: { replicas: 5 } }, PatchType.merge);
    const scale = await rest().get<{ spec: { replicas: number }; status: { replicas: number; selector: string } }>(appRef(ns, name, 'scale'));
    expect(scale).toMatchObject({ spec: { replicas: 5 }, status: { replicas: 2, selector: `app=${name}` } });
  });

  it('refuses more than 10000 replicas through the scale subresource too', async () => {
    const name = uniqueName('scale');
    await rest().create(appRef(ns), validApp(name));
    const err = await rejection(rest().patch(appRef(ns, name, 'scale'), { spec: { replicas: 10_001 } }, PatchType.merge));
    expect(err.message).toContain('spec.replicas');
    expect(err.message).toContain('less than or equal to 10000');
  });

  const spec = (patch: Obj): Obj => ({ spec: patch });
  const rollingUpdate = (patch: Obj): Obj => spec({ updateStrategy: { rollingUpdate: patch } });
  const podSpec = (patch: Obj): Obj => spec({ template: { spec: patch } });
  const container = { name: 'main', image: 'registry.example.com/team/web:v1' };
  const claim = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } };
  const mustBeIntOrPercent = 'maxUnavailable must be an integer of at least 1 or a percentage from 1% to 100%';

  /** [what, JSON merge patch onto a valid App, expected message substring] */
  const invalidApps: Array<[string, Obj, string]> = [
    ['negative replicas', spec({ replicas: -1 }), 'spec.replicas in body should be greater than or equal to 0'],
    ['more than 10000 replicas', spec({ replicas: 2 ** 31 - 1 }), 'spec.replicas in body should be less than or equal to 10000'],
    [
      'a highest ordinal above 2^31 - 1',
      spec({ replicas: 2, ordinals: { start: 2 ** 31 - 1 } }),
      'spec.ordinals.start: Invalid value: "object": ordinals.start + replicas - 1, the highest pod ordinal, must be at most 2147483647',
    ],
    ['maxUnavailable 0', rollingUpdate({ maxUnavailable: 0 }), mustBeIntOrPercent],
    ['maxUnavailable "0%"', rollingUpdate({ maxUnavailable: '0%' }), mustBeIntOrPercent],
    ['maxUnavailable "150%"', rollingUpdate({ maxUnavailable: '150%' }), mustBeIntOrPercent],
    ['maxUnavailable "3" (a string but no percentage)', rollingUpdate({ maxUnavailable: '3' }), mustBeIntOrPercent],
    [
      'a canary step with replicas and pause',
      rollingUpdate({ canary: { steps: [{ replicas: 1, pause: {} }] } }),
      'each canary step must set exactly one of replicas, pause or analysis',
    ],
    [
      'a canary step with neither replicas nor pause',
      rollingUpdate({ canary: { steps: [{}] } }),
      'each canary step must set exactly one of replicas, pause or analysis',
    ],
    [
      'canary replicas "0%"',
      rollingUpdate({ canary: { steps: [{ replicas: '0%' }] } }),
      'canary step replicas must be an integer of at least 1 or a percentage',
    ],
    [
      'a canary pause duration that is not a duration',
      rollingUpdate({ canary: { steps: [{ pause: { duration: 'soon' } }] } }),
      'canary.steps[0].pause.duration in body should match',
    ],
    [
      'gracePeriodSeconds 301',
      rollingUpdate({ inPlaceUpdateStrategy: { gracePeriodSeconds: 301 } }),
      'gracePeriodSeconds in body should be less than or equal to 300',
    ],
    ['podManagementPolicy Sequential', spec({ podManagementPolicy: 'Sequential' }), 'spec.podManagementPolicy: Unsupported value: "Sequential"'],
    ['podUpdatePolicy InPlace', rollingUpdate({ podUpdatePolicy: 'InPlace' }), 'podUpdatePolicy: Unsupported value: "InPlace"'],
    ['no selector', spec({ selector: null }), 'spec.selector: Required value'],
    ['an empty selector', spec({ selector: { matchLabels: null } }), 'selector must not be empty'],
    [
      'template labels that miss selector.matchLabels',
      spec({ template: { metadata: { labels: { app: 'other' } } } }),
      'selector does not match template labels',
    ],
    [
      'template labels that miss a matchExpression',
      spec({ selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['db'] }] } }),
      'selector does not match template labels',
    ],
    [
      // Upstream refuses it: in a `labelSelector=` query or status.labelSelector, the ',' would add a requirement.
      'a matchExpressions key with a comma',
      spec({ selector: { matchExpressions: [{ key: 'tier,app', operator: 'DoesNotExist' }] } }),
      'spec.selector.matchExpressions[0].key: Invalid value: "string": matchExpressions key must be a label key',
    ],
    [
      'a matchExpressions value that is not a label value',
      spec({ selector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db),app notin (web'] }] } }),
      'spec.selector.matchExpressions[0].values[0] in body should match',
    ],
    [
      'matchExpression In without values',
      spec({ selector: { matchExpressions: [{ key: 'tier', operator: 'In' }] } }),
      'values must be non-empty for operators In and NotIn',
    ],
    ['no containers', podSpec({ containers: [] }), 'spec.template.spec.containers in body should have at least 1 items'],
    ['a container without image', podSpec({ containers: [{ name: 'main' }] }), 'spec.template.spec.containers[0].image: Required value'],
    [
      'a container image outside the reference grammar',
      podSpec({ containers: [{ name: 'main', image: 'UPPER/Case:@@' }] }),
      'spec.template.spec.containers[0].image in body should match',
    ],
    [
      'an init container image outside the reference grammar',
      podSpec({ initContainers: [{ name: 'init', image: 'UPPER/Case:@@' }] }),
      'spec.template.spec.initContainers[0].image in body should match',
    ],
    [
      'two containers with one name',
      podSpec({ containers: [container, { ...container, image: 'busybox' }] }),
      'spec.template.spec.containers[1]: Duplicate value',
    ],
    ['restartPolicy Never', podSpec({ restartPolicy: 'Never' }), 'restartPolicy: Unsupported value: "Never"'],
    [
      'activeDeadlineSeconds',
      podSpec({ activeDeadlineSeconds: 10 }),
      'spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds is not supported for App pods',
    ],
    // Label keys the apiserver refuses on the pods, claims and revisions ebb makes (found by the spec fuzz).
    ...(['ünï', 'a/b/c', 'x'.repeat(64), '-lead', 'Upper.Case/x', `${'a'.repeat(254)}/x`] as const).map((key): [string, Obj, string] => [
      `a template label key ${JSON.stringify(key.length > 20 ? `${key.slice(0, 20)}…` : key)}`,
      spec({ template: { metadata: { labels: { [key]: 'v' } } } }),
      'spec.template.metadata.labels: Invalid value: "object": label keys must be',
    ]),
    [
      'a claim template label key with two slashes',
      spec({ volumeClaimTemplates: [{ ...claim, metadata: { name: 'data', labels: { 'a/b/c': 'v' } } }] }),
      'spec.volumeClaimTemplates[0].metadata.labels: Invalid value: "object": label keys must be',
    ],
    ['negative partition', rollingUpdate({ partition: -1 }), 'partition in body should be greater than or equal to 0'],
    ['negative ordinals.start', spec({ ordinals: { start: -1 } }), 'spec.ordinals.start in body should be greater than or equal to 0'],
    ['negative revisionHistoryLimit', spec({ revisionHistoryLimit: -1 }), 'spec.revisionHistoryLimit in body should be greater than or equal to 0'],
    ['rollingUpdate with type OnDelete', spec({ updateStrategy: { type: 'OnDelete' } }), 'rollingUpdate may only be set when type is RollingUpdate'],
    ['a serviceName that is not a DNS label', spec({ serviceName: 'Web_Service' }), 'spec.serviceName in body should match'],
    ['duplicate volumeClaimTemplates names', spec({ volumeClaimTemplates: [claim, claim] }), 'volumeClaimTemplates names must be unique'],
    ['imagePrewarm without enabled', spec({ imagePrewarm: { parallelism: 2 } }), 'spec.imagePrewarm.enabled: Required value'],
    [
      'imagePrewarm parallelism 0',
      spec({ imagePrewarm: { enabled: true, parallelism: 0 } }),
      'spec.imagePrewarm.parallelism in body should be greater than or equal to 1',
    ],
    ['a name with dots', { metadata: { name: 'web.v1' } }, 'metadata.name: Invalid value: "object": App name must be a DNS label'],
    ['a name over 52 characters', { metadata: { name: 'a'.repeat(53) } }, 'App name must be at most 52 characters'],
  ];

  it.each(invalidApps)('rejects an App with %s', async (_what, patch, message) => {
    const err = await rejection(rest().create(appRef(ns), mergePatch(validApp(uniqueName('bad')), patch)));
    expect(err.code).toBe('Invalid');
    expect(err.status).toBe(422);
    expect(err.message).toContain(message);
  });

  const images = (...entries: Obj[]): Obj => ({ spec: { images: entries } });
  const goodEntry = { image: 'registry.example.com/team/web:v1' };
  const invalidImageLists: Array<[string, Obj, string]> = [
    ['an image reference with upper case in the path', images({ image: 'registry.example.com/Team/web:v1' }), 'spec.images[0].image in body should match'],
    ['an image reference with an empty tag', images({ image: 'nginx:' }), 'spec.images[0].image in body should match'],
    ['an empty image', images({ image: '' }), 'spec.images[0].image in body should be at least 1 chars long'],
    ['an image reference over 512 characters', images({ image: `example.com/${'a'.repeat(510)}` }), 'spec.images[0].image: Too long'],
    ['the same image twice', images({ image: 'nginx:1.27' }, { image: 'nginx:1.27', alwaysPull: true }), 'spec.images[1]: Duplicate value'],
    ['an entry without image', images({ alwaysPull: true }), 'spec.images[0].image: Required value'],
    [
      'repullIntervalSeconds 10',
      images({ image: 'nginx', alwaysPull: true, repullIntervalSeconds: 10 }),
      'repullIntervalSeconds in body should be greater than or equal to 60',
    ],
    ['pullRequestedAt that is not a time', images({ image: 'nginx', pullRequestedAt: 'yesterday' }), 'pullRequestedAt in body must be of type date-time'],
    // Bad references after a valid entry: the message names the entry by its index, and quotes the value.
    [
      'a reference with spaces and punctuation',
      images(goodEntry, { image: 'Not A Valid Ref!!' }),
      'spec.images[1].image: Invalid value: "Not A Valid Ref!!": spec.images[1].image in body should match',
    ],
    [
      'a reference carrying a shell command',
      images(goodEntry, { image: 'a;rm -rf /' }),
      'spec.images[1].image: Invalid value: "a;rm -rf /": spec.images[1].image in body should match',
    ],
    ['an empty image after a valid one', images(goodEntry, { image: '' }), 'spec.images[1].image in body should be at least 1 chars long'],
    [
      'a digest of fewer than 32 hex digits',
      images(goodEntry, { image: `registry.example.com/team/web@sha256:${'a'.repeat(31)}` }),
      'spec.images[1].image in body should match',
    ],
    [
      'a 600-character reference',
      images(goodEntry, { image: `registry.example.com/${'a'.repeat(580)}:v1` }),
      'spec.images[1].image: Too long: may not be more than 512 bytes',
    ],
  ];

  it.each(invalidImageLists)('rejects an ImageList with %s', async (_what, patch, message) => {
    const err = await rejection(rest().create(imageListRef(), mergePatch(validImageList(uniqueName('bad')), patch)));
    expect(err.code).toBe('Invalid');
    expect(err.status).toBe(422);
    expect(err.message).toContain(message);
  });

  // The pattern is the reference grammar, which no runtime narrows further; these pass it, and the daemon
  // reports each Failed without sending it to the runtime (test/integration/daemon/containerd.test.ts).
  it.each([
    ['a repository name over 255 characters', `registry.example.com/${'a'.repeat(300)}:v1`],
    ['a sha256 digest of 40 hex digits', `registry.example.com/team/web@sha256:${'a'.repeat(40)}`],
    ['a sha256 digest in upper case', `registry.example.com/team/web@sha256:${'A'.repeat(64)}`],
    ['a digest of an algorithm runtimes do not support', `registry.example.com/team/web@sha1:${'a'.repeat(40)}`],
  ])('admits an ImageList entry with %s (left to the daemon)', async (_what, image) => {
    const name = uniqueName('lax');
    const created = await rest().create<ImageList>(imageListRef(), mergePatch(validImageList(name), images(goodEntry, { image })));
    expect(created.spec?.images?.map((e) => e.image)).toEqual([goodEntry.image, image]);
    await rest().delete(imageListRef(name));
  });

  it('rejects an unknown field when field validation is Strict', async () => {
    const app = mergePatch(validApp(uniqueName('strict')), spec({ replcas: 2 }));
    const err = await rejection(rest().create(appRef(ns), app, { fieldValidation: 'Strict' }));
    expect(err.code).toBe('BadRequest');
    expect(err.message).toContain('unknown field "spec.replcas"');
  });

  const immutable: Array<[string, Obj, string]> = [
    ['selector', { spec: { selector: { matchLabels: { tier: 'web' } } } }, 'selector is immutable'],
    ['serviceName', { spec: { serviceName: 'other' } }, 'serviceName is immutable'],
    ['serviceName (removed)', { spec: { serviceName: null } }, 'serviceName is immutable'],
    ['podManagementPolicy', { spec: { podManagementPolicy: 'Parallel' } }, 'podManagementPolicy is immutable'],
    [
      'volumeClaimTemplates',
      { spec: { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: '2Gi' } } } }] } },
      'volumeClaimTemplates is immutable',
    ],
  ];

  it.each(immutable)('rejects a change of %s', async (_what, patch, message) => {
    const name = uniqueName('imm');
    await rest().create(appRef(ns), validApp(name));
    const err = await rejection(rest().patch(appRef(ns, name), patch, PatchType.merge));
    expect(err.code).toBe('Invalid');
    expect(err.message).toContain(message);
  });

  it('allows changes of replicas, template, updateStrategy and minReadySeconds', async () => {
    const name = uniqueName('mut');
    await rest().create(appRef(ns), validApp(name));
    const patch = {
      spec: {
        replicas: 7,
        minReadySeconds: 5,
        template: { spec: { containers: [{ name: 'main', image: 'registry.example.com/team/web:v2' }] } },
        updateStrategy: { rollingUpdate: { paused: true, podUpdatePolicy: 'InPlaceIfPossible' } },
      },
    };
    const updated = await rest().patch<App>(appRef(ns, name), patch, PatchType.merge);
    expect(updated.spec).toMatchObject({
      replicas: 7,
      minReadySeconds: 5,
      updateStrategy: { rollingUpdate: { paused: true, podUpdatePolicy: 'InPlaceIfPossible' } },
    });
    expect(updated.spec.template.spec.containers[0]?.image).toBe('registry.example.com/team/web:v2');
  });
});
