/** Small readers shared by the processes' config parsers; each appends to `problems` instead of throwing. */
export type Env = Record<string, string | undefined>;

/** The settings that say where the apiserver is: a kubeconfig (list), else the pod's service account. */
export const KUBE_ENV_NAMES = ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'] as const;
export type KubeEnv = Readonly<Partial<Record<(typeof KUBE_ENV_NAMES)[number], string>>>;

/** Just the apiserver-locating settings of `env` (unset and empty ones left out). */
export function readKubeEnv(env: Env): KubeEnv {
  const out: Partial<Record<(typeof KUBE_ENV_NAMES)[number], string>> = {};
  for (const name of KUBE_ENV_NAMES) if (env[name]) out[name] = env[name];
  return Object.freeze(out);
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function readLogLevel(env: Env, name: string, problems: string[]): string {
  const level = env[name] ?? 'info';
  if (!LOG_LEVELS.includes(level)) problems.push(`${name}: must be one of ${LOG_LEVELS.join(', ')} (got "${level}")`);
  return level;
}

export function readPort(env: Env, name: string, fallback: number, problems: string[]): number {
  const text = env[name];
  const port = text === undefined || text === '' ? fallback : Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) problems.push(`${name}: must be a port number 0..65535 (got "${text}")`);
  return port;
}
