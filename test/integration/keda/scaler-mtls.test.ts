/**
 * Mutual TLS between the real KEDA operator and the watcher's scaler, installed as the README says: the watcher
 * with EBB_SCALER_TLS_CERT_FILE, EBB_SCALER_TLS_KEY_FILE and EBB_SCALER_CLIENT_CA_FILE (what
 * deploy/components/scaler-mtls sets), KEDA with deploy/keda plus deploy/keda/mtls (a TriggerAuthentication
 * reading its client certificate from the Secret ebb-scaler-client-tls). KEDA opens its stream over mutual TLS
 * and scales the worker 0 → 1 when work is enqueued; the scaler refuses clients without such a certificate
 * (shown in test/unit/watcher/scaler-streams.test.ts).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePki } from '../../../harness/sandbox/pki.ts';
import { appRef } from '../../../src/api/group.ts';
import { waitFor } from '../../../src/common/wait.ts';
import { core, type ResourceRef } from '../../../src/kube/paths.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import { freshNamespace, sandbox } from '../support.ts';
import { appManifest, deleteNamespace, ebbEnv, httpGet, printLogsOnFailure, spawnEbb, uniquePrefix, type EbbProcess } from '../watcher/helpers.ts';
import { kedaInstall, startKedaOperator, tail, type KedaOperator } from './operator.ts';
import { deploymentRef, followDeployment, onlyOf, renderedKeda, scaledObjectRef, standInDeployment, WORKER, type Follower } from './scaling.ts';

const install = kedaInstall();
const required = process.env['EBB_REQUIRE_KEDA'] === '1';
const triggerAuthRef = (ns: string, name?: string): ResourceRef => ({
  group: 'keda.sh',
  version: 'v1alpha1',
  resource: 'triggerauthentications',
  namespace: ns,
  name,
});

if ('missing' in install && required) {
  describe('the KEDA operator under make test (mutual TLS)', () => {
    it('is in the tool cache', () => {
      expect.fail(`EBB_REQUIRE_KEDA=1 (make test, which builds the operator first), yet ${install.missing}`);
    });
  });
}

describe.skipIf('missing' in install)('the KEDA scaler over mutual TLS', () => {
  let ns = '';
  let watcher: EbbProcess;
  let operator: KedaOperator | undefined;
  let follower: Follower | undefined;
  const procs: EbbProcess[] = [];
  const rest = (): KubeRest => sandbox().rest;
  const explain = (err: unknown): never => {
    throw new Error(`${(err as Error).message}\n--- KEDA operator log (last lines):\n${operator ? tail(operator.logFile) : ''}`);
  };

  beforeAll(async () => {
    if ('missing' in install) return;
    const { kubeconfig, redisUrl, dir } = sandbox();
    ns = await freshNamespace('keda-tls');
    // One CA signs both sides here; the scaler's certificate names 127.0.0.1, where KEDA dials it.
    const pki = await ensurePki(join(dir, `scaler-tls-${ns}`));
    const client = pki.clients['controller-manager'];
    const pem = async (file: string): Promise<string> => Buffer.from(await readFile(file)).toString('base64');
    await rest().create(core('secrets', ns), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'ebb-scaler-client-tls' },
      type: 'Opaque',
      data: { 'ca.crt': await pem(pki.caCert), 'tls.crt': await pem(client.cert), 'tls.key': await pem(client.key) },
    });
    const env = ebbEnv(
      { kubeconfig, redisUrl, prefix: uniquePrefix('keda-tls'), namespaces: [ns] },
      {
        EBB_RESYNC_PERIOD: '0',
        EBB_LOG_LEVEL: 'debug',
        EBB_SCALER_TLS_CERT_FILE: pki.serverCert,
        EBB_SCALER_TLS_KEY_FILE: pki.serverKey,
        EBB_SCALER_CLIENT_CA_FILE: pki.caCert,
      },
    );
    await rest().create(deploymentRef(ns), standInDeployment());
    watcher = spawnEbb('watcher', env);
    procs.push(watcher);
    const started = await watcher.waitForLog((l) => l.msg === 'watcher started', 30_000, '"watcher started"');
    await waitFor(async () => ((await httpGet(started['port'] as number, '/readyz')).status === 200 ? true : undefined), {
      timeoutMs: 20_000,
      what: 'watcher ready',
    });
    follower = followDeployment(rest(), ns, (name) => {
      const w = spawnEbb('worker', env, name);
      procs.push(w);
      return w;
    });
    operator = await startKedaOperator({ install, rest: rest(), kubeconfig, dir: join(dir, `keda-${ns}`), watchNamespace: ns });

    const objects = await renderedKeda(ns, ['deploy/keda/mtls']);
    const so = onlyOf(objects, 'ScaledObject') as {
      spec: { triggers: { metadata: Record<string, string>; authenticationRef?: { name: string } }[] } & Record<string, unknown>;
    };
    const trigger = so.spec.triggers[0];
    if (!trigger) throw new Error('the ScaledObject of deploy/keda has no trigger');
    trigger.metadata['scalerAddress'] = `127.0.0.1:${started['scalerPort'] as number}`;
    // No poll for the length of the test: only the pushed stream can scale up.
    so.spec['pollingInterval'] = 300;
    so.spec['cooldownPeriod'] = 5;
    await rest().create(triggerAuthRef(ns), onlyOf(objects, 'TriggerAuthentication'));
    await rest().create(scaledObjectRef(ns), so);
  });

  afterAll(async () => {
    await follower?.stop();
    if (ns) {
      await rest()
        .delete(scaledObjectRef(ns, WORKER))
        .catch(() => undefined);
      await waitFor(
        () =>
          rest()
            .get(scaledObjectRef(ns, WORKER))
            .then(
              () => undefined,
              () => true,
            ),
        { timeoutMs: 30_000, what: 'the ScaledObject gone' },
      ).catch(() => undefined);
    }
    await operator?.stop();
    await Promise.all(procs.map((p) => p.stop()));
    if (ns) await deleteNamespace(rest(), ns);
  });

  it('KEDA authenticates with its client certificate, opens the stream and scales the worker 0 → 1 on work', async () => {
    printLogsOnFailure(procs);
    const so = await rest().get<{ spec: { triggers: { authenticationRef?: { name: string } }[] } }>(scaledObjectRef(ns, WORKER));
    expect(so.spec.triggers[0]?.authenticationRef, 'deploy/keda/mtls names the TriggerAuthentication').toEqual({ name: 'ebb-scaler' });
    await watcher.waitForLog((l) => l.msg === 'scaler stream opened', 60_000, 'KEDA to open StreamIsActive over mutual TLS').catch(explain);
    expect(follower?.replicas()).toBe(0);
    const t0 = Date.now();
    await rest().create(appRef(ns), appManifest('web'));
    await waitFor(() => (follower?.replicas() === 1 ? true : undefined), { timeoutMs: 20_000, intervalMs: 20, what: 'KEDA to scale the worker to 1' }).catch(
      explain,
    );
    process.stdout.write(`mutual TLS: App created → Deployment at 1 replica in ${Date.now() - t0} ms\n`);
  });
});
