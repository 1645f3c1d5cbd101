/**
 * `ebb set image` as a user runs it, against the sandbox with the real watcher and worker: one container's
 * image changes, every other container (and its fields) stays, and the App rolls out the new revision.
 */
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { createApp, getApp, image, settled, uniqueName, useController } from '../app/harness.ts';
import { cliEnv, ebb, KUBECTL, pluginDir, run } from './cli.ts';

const ctl = useController('cli-set');

function threeContainers(name: string): AppSpec['template'] {
  return {
    metadata: { labels: { app: name } },
    spec: {
      initContainers: [{ name: 'migrate', image: image('m1') }],
      containers: [
        { name: 'main', image: image('v1'), env: [{ name: 'MODE', value: 'primary' }] },
        { name: 'proxy', image: image('p1'), ports: [{ containerPort: 8080, name: 'http' }] },
      ],
      terminationGracePeriodSeconds: 1,
    },
  };
}

describe('ebb set image', () => {
  it('changes one container, keeps the others and their fields, and the App rolls out', async () => {
    const name = uniqueName('img');
    await createApp(ctl.ns, name, { replicas: 2, template: threeContainers(name) });
    const before = (await settled(ctl.ns, name)).app;

    const res = await ebb(['set', 'image', `app/${name}`, `proxy=${image('p2')}`, '-n', ctl.ns]);
    expect(res.stderr).toBe('');
    expect(res.stdout).toBe(`app.apps.ebb.dev/${name} image updated (proxy)\n`);
    expect(res.code).toBe(0);

    const after = await getApp(ctl.ns, name);
    const was = before.spec.template.spec;
    expect(after.spec.template.spec?.initContainers).toEqual(was?.initContainers);
    expect(after.spec.template.spec?.containers).toEqual([was?.containers[0], { ...was?.containers[1], image: image('p2') }]);
    expect(after.spec.template.spec?.containers[0]?.env).toEqual([{ name: 'MODE', value: 'primary' }]);

    // A new revision, and every pod on it with the new proxy image and the same main and init images.
    const done = await settled(ctl.ns, name);
    expect(done.app.status?.updateRevision).not.toBe(before.status?.updateRevision);
    for (const pod of done.pods) {
      expect(pod.spec.containers.map((c) => [c.name, c.image])).toEqual([
        ['main', image('v1')],
        ['proxy', image('p2')],
      ]);
      expect(pod.spec.initContainers?.map((c) => c.image)).toEqual([image('m1')]);
    }

    // Again with the same image: nothing written, no new generation.
    const same = await ebb(['set', 'image', `app/${name}`, `proxy=${image('p2')}`, '-n', ctl.ns]);
    expect(same.stdout).toBe(`app.apps.ebb.dev/${name} image unchanged\n`);
    expect((await getApp(ctl.ns, name)).metadata.generation).toBe(after.metadata.generation);
  });

  it('as the kubectl plugin sets an init container; refuses an unknown container and a missing App', async () => {
    const name = uniqueName('plug');
    await createApp(ctl.ns, name, { replicas: 1, template: threeContainers(name) });
    await settled(ctl.ns, name);
    const env = cliEnv(await pluginDir());
    const init = await run(KUBECTL, ['ebb', 'set', 'image', `app/${name}`, `migrate=${image('m2')}`, '-n', ctl.ns], env);
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    const app = await getApp(ctl.ns, name);
    expect(app.spec.template.spec?.initContainers?.[0]?.image).toBe(image('m2'));
    expect(app.spec.template.spec?.containers.map((c) => c.image)).toEqual([image('v1'), image('p1')]);

    const unknown = await ebb(['set', 'image', `app/${name}`, `mian=${image('v9')}`, '-n', ctl.ns]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(`ebb set image: app "${name}" has no container named "mian" (its containers: migrate, main, proxy)\n`);
    expect((await getApp(ctl.ns, name)).metadata.generation).toBe(app.metadata.generation);

    const missing = await ebb(['set', 'image', 'app/nope', `main=${image('v9')}`, '-n', ctl.ns]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^ebb set: .*not found/);
  });
});
