import type { KubeEnv } from '../common/process-settings.ts';
import { loadKubeConfig } from './kubeconfig.ts';
import { KubeRest } from './rest.ts';
import { errorFirstLine } from '../common/errors.ts';

/**
 * The apiserver client of a long-running process (`ebb watcher`, `ebb worker`) from the KUBECONFIG setting.
 * The credentials are fetched once here, so a broken kubeconfig, an unreadable token or a failing credential
 * plugin stops the process at start with one line naming the setting and the file.
 */
export async function kubeClient(env: KubeEnv): Promise<KubeRest> {
  const path = env.KUBECONFIG;
  try {
    const rest = new KubeRest(loadKubeConfig(undefined, { env }));
    await rest.credentials();
    return rest;
  } catch (err) {
    const why = errorFirstLine(err);
    const where = path ? `KUBECONFIG=${path}` : 'KUBECONFIG unset (default kubeconfig or in-cluster config)';
    throw new Error(`${where}: cannot load the kubeconfig: ${why}`);
  }
}
