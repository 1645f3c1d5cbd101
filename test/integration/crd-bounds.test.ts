/**
 * What a tenant writes into ebb's own fields is bounded by the CRDs in deploy/crds, on a real kube-apiserver:
 * over a bound, an App, ImageList or ImagePullJob is refused with a message that names the field and the bound
 * (analysis URLs, bodies, headers, conditions and queries, checks, canary steps, image lists, kept revisions).
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { mergePatch } from '../../harness/fakes/store.ts';
import { API_VERSION, IMAGE_LIST_KIND, IMAGE_PULL_JOB_KIND, appRef, imageListRef, imagePullJobRef } from '../../src/api/group.ts';
import { bareApp } from './app-body.ts';
import { freshNamespace, rejection, sandbox } from './support.ts';

type Obj = Record<string, unknown>;

const uniqueName = (prefix: string): string => `${prefix}-${randomBytes(3).toString('hex')}`;

const spec = (patch: Obj): Obj => ({ spec: patch });
const rollingUpdate = (patch: Obj): Obj => spec({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: patch } });
const checks = (...list: Obj[]): Obj => rollingUpdate({ analysis: { checks: list } });
const webCheck = (web: Obj, name = 'errors'): Obj => ({ name, web: { url: 'http://metrics.example/', successCondition: 'result == 0', ...web } });
const promCheck = (prometheus: Obj): Obj => ({
  name: 'rate',
  prometheus: { address: 'http://prometheus.monitoring:9090', query: 'up', successCondition: 'result == 1', ...prometheus },
});
const CHECK = 'spec.updateStrategy.rollingUpdate.analysis.checks';

/** [what, JSON merge patch onto a valid App, expected message substring] */
const overBounds: Array<[string, Obj, string]> = [
  ['revisionHistoryLimit 101', spec({ revisionHistoryLimit: 101 }), 'spec.revisionHistoryLimit in body should be less than or equal to 100'],
  [
    'an analysis URL over 2048 characters',
    checks(webCheck({ url: `http://metrics.example/${'a'.repeat(2048)}` })),
    `${CHECK}[0].web.url: Too long: may not be more than 2048 bytes`,
  ],
  [
    'an analysis body over 16384 characters',
    checks(webCheck({ method: 'POST', body: 'x'.repeat(16_385) })),
    `${CHECK}[0].web.body: Too long: may not be more than 16384 bytes`,
  ],
  [
    'nine analysis headers',
    checks(webCheck({ headers: Array.from({ length: 9 }, (_, i) => ({ name: `X-H${i}`, value: 'v' })) })),
    `${CHECK}[0].web.headers: Too many: 9: must have at most 8 items`,
  ],
  [
    'an analysis header value over 4096 characters',
    checks(webCheck({ headers: [{ name: 'X-H', value: 'v'.repeat(4097) }] })),
    `${CHECK}[0].web.headers[0].value: Too long: may not be more than 4096 bytes`,
  ],
  [
    'an analysis condition over 512 characters',
    checks(webCheck({ successCondition: `result == '${'a'.repeat(512)}'` })),
    `${CHECK}[0].web.successCondition: Too long: may not be more than 512 bytes`,
  ],
  [
    'a Prometheus query over 4096 characters',
    checks(promCheck({ query: `up${' '.repeat(4095)}` })),
    `${CHECK}[0].prometheus.query: Too long: may not be more than 4096 bytes`,
  ],
  ['nine analysis checks', checks(...Array.from({ length: 9 }, (_, i) => webCheck({}, `c${i}`))), `${CHECK}: Too many: 9: must have at most 8 items`],
  [
    '33 canary steps',
    rollingUpdate({ canary: { steps: Array.from({ length: 33 }, () => ({ replicas: 1 })) } }),
    'spec.updateStrategy.rollingUpdate.canary.steps: Too many: 33: must have at most 32 items',
  ],
];

describe("CRD bounds on ebb's own fields", () => {
  const { rest } = sandbox();
  let ns = '';
  beforeAll(async () => {
    ns = await freshNamespace('bounds');
  });

  it('admits the App the cases start from', async () => {
    const name = uniqueName('ok');
    await rest.create(appRef(ns), mergePatch(bareApp(name), checks(webCheck({}))));
    await rest.delete(appRef(ns, name));
  });

  it.each(overBounds)('refuses an App with %s', async (_what, patch, message) => {
    const err = await rejection(rest.create(appRef(ns), mergePatch(bareApp(uniqueName('big')), patch)));
    expect(err.status).toBe(422);
    expect(err.message).toContain(message);
  });

  it('refuses an ImageList of 1025 images', async () => {
    const list = {
      apiVersion: API_VERSION,
      kind: IMAGE_LIST_KIND,
      metadata: { name: uniqueName('big') },
      spec: { images: Array.from({ length: 1025 }, (_, i) => ({ image: `registry.example.com/team/web:v${i}` })) },
    };
    const err = await rejection(rest.create(imageListRef(), list));
    expect(err.status).toBe(422);
    expect(err.message).toContain('spec.images: Too many: 1025: must have at most 1024 items');
  });

  it('refuses an ImagePullJob of 65 images', async () => {
    const job = {
      apiVersion: API_VERSION,
      kind: IMAGE_PULL_JOB_KIND,
      metadata: { name: uniqueName('big') },
      spec: { images: Array.from({ length: 65 }, (_, i) => `registry.example.com/team/web:v${i}`) },
    };
    const err = await rejection(rest.create(imagePullJobRef(ns), job));
    expect(err.status).toBe(422);
    expect(err.message).toContain('spec.images: Too many: 65: must have at most 64 items');
  });
});
