import { describe, expect, it } from 'vitest';
import type { App } from '../../api/app.ts';
import { UsageError } from '../usage.ts';
import { parseSetArgs } from './args.ts';
import { planSetImage } from './image.ts';

const app = {
  apiVersion: 'apps.ebb.dev/v1alpha1',
  kind: 'App',
  metadata: { name: 'web', namespace: 'team' },
  spec: {
    selector: {},
    template: {
      spec: {
        initContainers: [{ name: 'migrate', image: 'm:1' }],
        containers: [
          { name: 'main', image: 'a:1', env: [{ name: 'X', value: '1' }] },
          { name: 'sidecar', image: 's:1' },
        ],
      },
    },
  },
} as unknown as App;

describe('planSetImage', () => {
  it('tests the name at the index, then sets only that image', () => {
    expect(planSetImage(app, [{ container: 'sidecar', image: 's:2' }])).toEqual({
      kind: 'patch',
      changed: ['sidecar'],
      ops: [
        { op: 'test', path: '/spec/template/spec/containers/1/name', value: 'sidecar' },
        { op: 'add', path: '/spec/template/spec/containers/1/image', value: 's:2' },
      ],
    });
  });

  it('reaches init containers, and * sets every container that differs', () => {
    const migrate = planSetImage(app, [{ container: 'migrate', image: 'm:2' }]);
    expect(migrate).toMatchObject({ kind: 'patch', changed: ['migrate'] });
    const all = planSetImage(app, [{ container: '*', image: 'a:1' }]);
    expect(all).toMatchObject({ kind: 'patch', changed: ['migrate', 'sidecar'] });
    // A named container wins over *.
    expect(
      planSetImage(app, [
        { container: '*', image: 'x:9' },
        { container: 'main', image: 'a:1' },
      ]),
    ).toMatchObject({ changed: ['migrate', 'sidecar'] });
  });

  it('refuses an unknown container, naming the ones there are, and writes nothing for images already set', () => {
    expect(planSetImage(app, [{ container: 'mian', image: 'a:2' }])).toEqual({
      kind: 'refuse',
      message: 'app "web" has no container named "mian" (its containers: migrate, main, sidecar)',
    });
    expect(planSetImage(app, [{ container: 'main', image: 'a:1' }])).toEqual({ kind: 'unchanged' });
  });
});

describe('parseSetArgs', () => {
  it('parses the App, the assignments and the namespace', () => {
    expect(parseSetArgs(['image', 'app/web', 'main=a:2', 'sidecar=reg:5000/s@sha256:ab', '-n', 'team'])).toEqual({
      op: 'image',
      name: 'web',
      namespace: 'team',
      context: undefined,
      assignments: [
        { container: 'main', image: 'a:2' },
        { container: 'sidecar', image: 'reg:5000/s@sha256:ab' },
      ],
    });
  });

  it.each([
    [['image', 'app/web']],
    [['image', 'main=a:2']],
    [['image', 'app/web', 'main']],
    [['image', 'app/web', 'main=']],
    [['image', 'app/web', 'Main=a']],
    [['image', 'app/web', 'main=a', 'main=b']],
    [['image', 'deployment/web', 'main=a']],
    [['env', 'app/web']],
    [['image', 'app/web', 'main=a', '--force']],
  ])('refuses %j with a usage error', (args) => {
    expect(() => parseSetArgs(args)).toThrow(UsageError);
  });
});
