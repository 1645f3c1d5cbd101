/**
 * Helpers of the install test's run of deploy/components/watcher-worker-thread: a kubeconfig made of a token
 * Secret once the token controller filled it, and an App rolled out by a watcher that runs its worker thread
 * with no worker process beside it.
 */
import type { AppSpec } from '../../../src/api/app-spec.ts';
import { appRef } from '../../../src/api/group.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { core } from '../../../src/kube/paths.ts';
import { createApp, image, patchApp, podsOf, settled } from '../app/harness.ts';
import type { DedicatedNode } from '../imagelist/dedicated-node.ts';
import { sandbox } from '../support.ts';
import { httpGet, metricValue, type EbbProcess } from '../watcher/helpers.ts';
import { NAMESPACE, tokenKubeconfig } from './install.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 250 };

/** A kubeconfig for the token the token controller puts in the Secret `secret` of ebb-system (waits for it). */
export async function tokenSecretKubeconfig(adminKubeconfig: string, secret: string, file: string, signal: AbortSignal): Promise<string> {
  const { rest } = sandbox();
  const token = await waitFor(
    async () => {
      const s = await rest.get<{ data?: Record<string, string> }>(core('secrets', NAMESPACE, secret));
      const data = s.data?.['token'];
      return data ? Buffer.from(data, 'base64').toString() : undefined;
    },
    { ...WAIT, signal, what: `the token controller filled ${secret}` },
  );
  return tokenKubeconfig(adminKubeconfig, token, file);
}

/**
 * An App of two pods on `node` created, rolled from v1 to v2 and deleted in `ns`, the one namespace `watcher`
 * watches (then deleted too); the images its pods ran after the rollout, and the App reconciles its thread finished.
 */
export async function rollOutAlone(
  watcher: EbbProcess,
  ns: string,
  node: DedicatedNode,
  signal: AbortSignal,
): Promise<{ images: string[]; threadReconciles: number }> {
  const port = await watcher.httpPort(60_000);
  const template = (tag: string): AppSpec['template'] => ({
    metadata: { labels: { app: 'solo' } },
    spec: { ...node.placement, containers: [{ name: 'main', image: image(tag) }], terminationGracePeriodSeconds: 1 },
  });
  await createApp(ns, 'solo', { replicas: 2, template: template('v1') });
  await settled(ns, 'solo', undefined, 90_000);
  await patchApp(ns, 'solo', { template: template('v2') });
  const rolled = await settled(ns, 'solo', undefined, 90_000);
  const metrics = (await httpGet(port, '/metrics')).body;
  const { rest } = sandbox();
  await rest.delete(appRef(ns, 'solo'));
  await waitFor(async () => ((await podsOf(ns, 'solo')).length === 0 ? true : undefined), { ...WAIT, signal, what: 'the pods of solo gone' });
  await rest.delete(core('namespaces', undefined, ns)).catch(() => undefined);
  return {
    images: rolled.pods.map((p) => (p.spec?.['containers'] as { image: string }[])[0]?.image ?? ''),
    threadReconciles: metricValue(metrics, 'ebb_reconcile_total', { kind: 'App', result: 'done', thread: 'watcher' }),
  };
}
