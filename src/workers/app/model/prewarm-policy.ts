/** The worker's pre-warm settings as a plan reads them (the worker context carries them to every App reconcile). */
export interface PrewarmPolicy {
  /** Images one App lists on one node, at most. */
  readonly maxImagesPerNode: number;
  /** A rollout waiting (Paused True) longer than this stops pinning its images; 0: no limit. */
  readonly pinMaxMs: number;
  /** A node whose daemon reported none of the images this long after the request gives its slot back; 0: never. */
  readonly answerTimeoutMs: number;
}

/** The defaults of the worker's settings (EBB_PREWARM_MAX_IMAGES_PER_NODE, EBB_PREWARM_PIN_MAX, EBB_PREWARM_ANSWER_TIMEOUT). */
export const DEFAULT_PREWARM_POLICY: PrewarmPolicy = Object.freeze({ maxImagesPerNode: 16, pinMaxMs: 24 * 3_600_000, answerTimeoutMs: 10 * 60_000 });
