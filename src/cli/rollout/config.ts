import { KUBE_SETTINGS, kubeAccessOf, type KubeAccess } from '../../common/process-settings.ts';
import { parseSettings, type Env } from '../../common/settings.ts';

/** What `ebb rollout` reads: where the apiserver is, as every other ebb command reads it. */
export const ROLLOUT_CLI_SETTINGS = KUBE_SETTINGS;

/** Pure parser; throws one ConfigError listing every problem. */
export function parseRolloutCliConfig(env: Env): KubeAccess {
  return kubeAccessOf(parseSettings(ROLLOUT_CLI_SETTINGS, env));
}

export function loadRolloutCliConfig(): KubeAccess {
  return parseRolloutCliConfig(process.env);
}
