import type { KubeAccess } from '../common/process-settings.ts';
import { loadKubeConfig, type KubeConfig } from './kubeconfig.ts';
import { KubeRest } from './rest.ts';
import { errorFirstLine } from '../common/errors.ts';

/**
 * The apiserver client of a long-running process (`ebb watcher`, `ebb worker`) from the KUBECONFIG setting.
 * The credentials are fetched once here, so a broken kubeconfig, an unreadable token or a failing credential
 * plugin stops the process at start with one line naming the setting and the file.
 */
export async function kubeClient(access: KubeAccess): Promise<KubeRest> {
  return (await kubeConnection(access)).rest;
}

/**
 * kubeClient, with the kubeconfig it was built from (a command reads the context's namespace from it);
 * `context` picks a context other than the current one (a command's `--context`).
 */
export async function kubeConnection({ env, requestTimeoutMs, protobuf }: KubeAccess, context?: string): Promise<{ rest: KubeRest; config: KubeConfig }> {
  const path = env.KUBECONFIG;
  try {
    const config = loadKubeConfig(undefined, { env, context });
    const rest = new KubeRest(config, { requestTimeoutMs, protobuf });
    await rest.credentials();
    return { rest, config };
  } catch (err) {
    const why = errorFirstLine(err);
    const where = path ? `KUBECONFIG=${path}` : 'KUBECONFIG unset (default kubeconfig or in-cluster config)';
    throw new Error(`${where}: cannot load the kubeconfig: ${why}`);
  }
}
