/**
 * The real KEDA operator, run out of cluster against the sandbox: the binary and CRDs that `hack/keda.sh`
 * built and copied into the tool cache (`<cache>/keda-<version>/`), the version read from hack/keda/go.mod.
 *
 * Only the operator runs: it creates the HPA and scales the target between 0 and 1 itself (from the
 * external-push scaler's stream and its own polling). The metrics apiserver and the admission webhooks are
 * not needed for that; without the metrics apiserver an HPA controller could not read the external metric,
 * which matters only above one replica.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '../../../src/common/wait.ts';
import { KubeError } from '../../../src/kube/errors.ts';
import { core } from '../../../src/kube/paths.ts';
import type { KubeRest } from '../../../src/kube/rest.ts';
import { installCrds } from '../../../harness/sandbox/crds.ts';
import { PROJECT_ROOT } from '../../../harness/sandbox/paths.ts';
import { freePort } from '../../../harness/sandbox/ports.ts';
import { startChild, type Child } from '../../../harness/sandbox/process.ts';

const run = promisify(execFile);

/** Where KEDA's cluster-wide objects live (leader election, Secrets of ClusterTriggerAuthentications). */
export const KEDA_NAMESPACE = 'keda';

export interface KedaInstall {
  version: string;
  dir: string;
  binary: string;
  crdDir: string;
}

/** The cached operator of the version hack/keda/go.mod pins, or the reason it cannot run. */
export function kedaInstall(): KedaInstall | { missing: string } {
  const gomod = readFileSync(join(PROJECT_ROOT, 'hack', 'keda', 'go.mod'), 'utf8');
  const version = /github\.com\/kedacore\/keda\/v2 (v\S+)/.exec(gomod)?.[1];
  if (!version) return { missing: 'hack/keda/go.mod pins no github.com/kedacore/keda/v2 version' };
  const cache = process.env['EBB_CACHE_DIR'] ?? join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'ebb');
  const dir = join(cache, `keda-${version}`);
  const binary = join(dir, 'keda');
  const crdDir = join(dir, 'crds');
  if (!existsSync(binary) || !existsSync(crdDir)) return { missing: `no KEDA ${version} operator in ${dir} (build it once with \`make keda\`)` };
  return { version, dir, binary, crdDir };
}

export interface KedaOperator {
  child: Child;
  logFile: string;
  stop(): Promise<void>;
}

/**
 * A serving certificate for the operator's gRPC metrics service (it refuses to start without one; only the
 * metrics apiserver would call it): self-signed, its own CA.
 */
async function metricsServiceCerts(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const [crt, key] = [join(dir, 'tls.crt'), join(dir, 'tls.key')];
  if (!existsSync(crt)) {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      crt,
      '-days',
      '2',
      '-subj',
      '/CN=keda-operator',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]);
  }
  await copyFile(crt, join(dir, 'ca.crt'));
}

/**
 * Installs KEDA's CRDs, creates its namespace and starts the operator watching `watchNamespace` only, its
 * metrics, health and metrics-service listeners on free loopback ports, leader election off. Resolves once
 * /readyz answers.
 */
export async function startKedaOperator(opts: {
  install: KedaInstall;
  rest: KubeRest;
  kubeconfig: string;
  dir: string;
  watchNamespace: string;
}): Promise<KedaOperator> {
  const { install, rest } = opts;
  await installCrds(rest, install.crdDir);
  await rest.create(core('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: KEDA_NAMESPACE } }).catch((err: unknown) => {
    if (!(err instanceof KubeError && err.status === 409)) throw err;
  });
  await mkdir(opts.dir, { recursive: true });
  const certDir = join(opts.dir, 'certs');
  await metricsServiceCerts(certDir);
  const caDir = join(opts.dir, 'custom-ca');
  await mkdir(caDir, { recursive: true });
  const [metrics, health, metricsService] = [await freePort(), await freePort(), await freePort()];
  const logFile = join(opts.dir, 'keda-operator.log');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    KUBECONFIG: opts.kubeconfig,
    WATCH_NAMESPACE: opts.watchNamespace,
    POD_NAMESPACE: KEDA_NAMESPACE,
    KEDA_CLUSTER_OBJECT_NAMESPACE: KEDA_NAMESPACE,
  };
  const child = startChild(
    'keda-operator',
    install.binary,
    [
      `--metrics-bind-address=127.0.0.1:${metrics}`,
      `--health-probe-bind-address=127.0.0.1:${health}`,
      `--metrics-service-bind-address=127.0.0.1:${metricsService}`,
      '--leader-elect=false',
      `--cert-dir=${certDir}`,
      // Custom CAs for scalers' TLS: none (an empty folder; the default is a path inside the image).
      `--ca-dir=${caDir}`,
      '--zap-log-level=info',
      '--zap-encoder=console',
    ],
    logFile,
    env,
  );
  const died = child.exited.then((why) => {
    throw new Error(`the KEDA operator exited (${why}); its log ${logFile} ends:\n${tail(logFile)}`);
  });
  const ready = waitFor(
    async () => {
      const res = await fetch(`http://127.0.0.1:${health}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200, what: 'the KEDA operator ready' },
  );
  try {
    await Promise.race([ready, died]);
  } catch (err) {
    await child.stop();
    throw err;
  }
  return { child, logFile, stop: () => child.stop() };
}

/** The last lines of the operator's log (for failure messages). */
export function tail(logFile: string, lines = 40): string {
  try {
    return readFileSync(logFile, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}
