/**
 * `ebb rollout explain` for a rollout held by the dry run: a ValidatingAdmissionPolicy (bound to this file's
 * namespace) refuses the new template's pods, so ebb keeps every pod running and says why; explain names the
 * refusal, the pod it keeps, and the delete it does not make.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { ConditionType } from '../../../src/api/keys.ts';
import type { Explanation } from '../../../src/cli/rollout/explain/model.ts';
import { createApp, image, patchApp, settled, uniqueName, until, useController } from '../app/harness.ts';
import { refusePodsLabelled } from '../app/refuse-pods.ts';
import { cliEnv, MAIN, run } from './cli.ts';

const ctl = useController('cli-xheld');
const LABEL = 'explain.example.com/denied';
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const clean of cleanups.reverse()) await clean().catch(() => undefined);
});

const template = (name: string, tag: string, denied: boolean): AppSpec['template'] => ({
  metadata: { labels: { app: name, ...(denied ? { [LABEL]: 'yes' } : {}) } },
  spec: { containers: [{ name: 'main', image: image(tag) }], terminationGracePeriodSeconds: 1 },
});

describe('ebb rollout explain: a rollout held by the dry run', () => {
  it('names the refusal as the wait, on the pod it keeps, and the delete it does not make', async () => {
    await refusePodsLabelled(ctl.ns, LABEL, cleanups);
    const name = uniqueName('held');
    await createApp(ctl.ns, name, { replicas: 2, template: template(name, 'v1', false) });
    await settled(ctl.ns, name);
    await patchApp(ctl.ns, name, { template: template(name, 'v2', true) });
    await until(ctl.ns, name, (s) => s.app.status?.conditions?.some((c) => c.type === ConditionType.rolloutHeld && c.status === 'True') === true, {
      what: 'RolloutHeld True',
    });
    const env = { ...cliEnv(), EBB_REDIS_URL: ctl.env['EBB_REDIS_URL'], EBB_QUEUE_PREFIX: ctl.env['EBB_QUEUE_PREFIX'] };
    const res = await run(process.execPath, [MAIN, 'rollout', 'explain', `app/${name}`, '-n', ctl.ns], env);
    process.stdout.write(`--- explain, a rollout held by the dry run:\n${res.stdout}`);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(
      /WAITING FOR\n {2}held: the apiserver would refuse the pods of revision \S+ \(\w+\): .*pods labelled explain\.example\.com\/denied=yes are not allowed here/,
    );
    expect(res.stdout).toMatch(new RegExp(`  ${name}-1 +current .* kept running: the dry run refuses its replacement \\(see WAITING FOR\\)`));
    expect(res.stdout).toContain(
      `next: delete ${name}-1 (recreate it at the update revision): not done while the rollout is held (the dry run refuses the replacement)`,
    );

    const e = JSON.parse((await run(process.execPath, [MAIN, 'rollout', 'explain', `app/${name}`, '-n', ctl.ns, '-o', 'json'], env)).stdout) as Explanation;
    expect(e.waits.map((w) => w.kind)).toContain('held');
    const kept = e.pods.find((p) => p.name === `${name}-1`);
    expect(kept?.revision).toBe('current');
    expect(kept?.waits.map((w) => w.kind)).toContain('held');
    expect(e.next.some((n) => n.source === 'plan' && n.what.includes('not done while the rollout is held'))).toBe(true);
  });
});
