import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { AppSchema, type App } from './app.ts';
import type { AppSpec } from './app-spec.ts';
import { withAppSpecDefaults, withImageListSpecDefaults } from './defaults.ts';
import { API_VERSION, appRef, imageListRef } from './group.ts';
import { ImageListSchema } from './image-list.ts';
import { resourcePath } from '../kube/paths.ts';

const minimalSpec = (): AppSpec => ({
  selector: { matchLabels: { app: 'web' } },
  template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } },
});

describe('App spec defaults', () => {
  it('defaults a minimal spec like a StatefulSet', () => {
    expect(withAppSpecDefaults(minimalSpec())).toEqual({
      ...minimalSpec(),
      replicas: 1,
      podManagementPolicy: 'OrderedReady',
      minReadySeconds: 0,
      revisionHistoryLimit: 10,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      updateStrategy: { type: 'RollingUpdate' },
    });
  });

  it('defaults rollingUpdate fields only when rollingUpdate is given', () => {
    const spec = { ...minimalSpec(), updateStrategy: { rollingUpdate: { canary: { steps: [{ replicas: '10%' }, { pause: {} }] } } } };
    expect(withAppSpecDefaults(spec).updateStrategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { partition: 0, maxUnavailable: 1, paused: false, podUpdatePolicy: 'ReCreate', canary: { steps: [{ replicas: '10%' }, { pause: {} }] } },
    });
  });

  it('keeps explicit values and does not change its input', () => {
    const spec: AppSpec = { ...minimalSpec(), replicas: 0, updateStrategy: { type: 'OnDelete' }, imagePrewarm: { enabled: true } };
    const before = structuredClone(spec);
    const out = withAppSpecDefaults(spec);
    expect(out).toMatchObject({ replicas: 0, updateStrategy: { type: 'OnDelete' } });
    // lookahead and parallelism have no default: unset, ebb measures the one and the pull budget bounds the other.
    expect(out.imagePrewarm).toEqual({ enabled: true });
    expect(out.updateStrategy?.rollingUpdate).toBeUndefined();
    expect(spec).toEqual(before);
  });
});

describe('ImageList spec defaults', () => {
  it('defaults alwaysPull and repullIntervalSeconds per entry', () => {
    expect(withImageListSpecDefaults({ images: [{ image: 'nginx' }, { image: 'redis:7', alwaysPull: true, repullIntervalSeconds: 600 }] })).toEqual({
      images: [
        { image: 'nginx', alwaysPull: false, repullIntervalSeconds: 86400 },
        { image: 'redis:7', alwaysPull: true, repullIntervalSeconds: 600 },
      ],
    });
  });
});

describe('schema shapes', () => {
  const app = (): App => ({ apiVersion: API_VERSION, kind: 'App', metadata: { name: 'web', namespace: 'default' }, spec: minimalSpec() });

  it('accepts an App with fields it does not declare inside containers and the pod spec', () => {
    const a = app();
    a.spec.template.spec['nodeSelector'] = { disk: 'ssd' };
    a.spec.template.spec.containers[0]!['ports'] = [{ containerPort: 80 }];
    expect(Value.Check(AppSchema, a)).toBe(true);
  });

  it.each([
    ['replicas as a string', (a: App) => Object.assign(a.spec, { replicas: '3' })],
    ['an unknown podUpdatePolicy', (a: App) => Object.assign(a.spec, { updateStrategy: { rollingUpdate: { podUpdatePolicy: 'Sometimes' } } })],
    ['a container without image', (a: App) => Object.assign(a.spec.template.spec, { containers: [{ name: 'main' }] })],
    ['no containers', (a: App) => Object.assign(a.spec.template.spec, { containers: [] })],
    [
      'a grace period over 300 seconds',
      (a: App) => Object.assign(a.spec, { updateStrategy: { rollingUpdate: { inPlaceUpdateStrategy: { gracePeriodSeconds: 301 } } } }),
    ],
    [
      'a container image outside the reference grammar',
      (a: App) => Object.assign(a.spec.template.spec, { containers: [{ name: 'main', image: 'UPPER/Case:@@' }] }),
    ],
    [
      'an init container image outside the reference grammar',
      (a: App) => Object.assign(a.spec.template.spec, { initContainers: [{ name: 'init', image: 'UPPER/Case:@@' }] }),
    ],
  ])('rejects %s', (_what, mutate) => {
    const a = app();
    mutate(a);
    expect(Value.Check(AppSchema, a)).toBe(false);
  });

  it('checks ImageList entries against the image reference grammar', () => {
    const list = (image: string) => ({ apiVersion: API_VERSION, kind: 'ImageList', metadata: { name: 'node-1' }, spec: { images: [{ image }] } });
    expect(Value.Check(ImageListSchema, list('registry.example.com:5000/team/app:v1'))).toBe(true);
    expect(Value.Check(ImageListSchema, list('Registry/Team:'))).toBe(false);
  });
});

describe('resource references', () => {
  it.each([
    [appRef('ns1'), '/apis/apps.ebb.dev/v1alpha1/namespaces/ns1/apps'],
    [appRef('ns1', 'web', 'scale'), '/apis/apps.ebb.dev/v1alpha1/namespaces/ns1/apps/web/scale'],
    [appRef(), '/apis/apps.ebb.dev/v1alpha1/apps'],
    [imageListRef('node-1', 'status'), '/apis/apps.ebb.dev/v1alpha1/imagelists/node-1/status'],
  ])('%o is %s', (ref, path) => {
    expect(resourcePath(ref)).toBe(path);
  });
});
