/** Where the watcher serves the rollouts page, beside Bull Board (same listener, same login). */
export const ROLLOUTS_PATH = '/rollouts';
