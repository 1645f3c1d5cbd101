import { parseSettings, type Env } from '../../common/settings.ts';
import { QUEUE_SETTINGS, queueConfigOf, type QueueConfig } from '../../queue/settings.ts';

/**
 * What `ebb queue` reads: the queue settings of the watcher and the worker, so that it finds their queues
 * (EBB_REDIS_URL, EBB_QUEUE_PREFIX) and the jobs it enqueues carry the same options as theirs.
 */
export const QUEUE_CLI_SETTINGS = QUEUE_SETTINGS;

/** Pure parser; throws one ConfigError listing every problem. */
export function parseQueueCliConfig(env: Env): QueueConfig {
  return queueConfigOf(parseSettings(QUEUE_CLI_SETTINGS, env));
}

export function loadQueueCliConfig(): QueueConfig {
  return parseQueueCliConfig(process.env);
}
