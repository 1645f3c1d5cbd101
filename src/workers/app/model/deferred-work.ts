/** Work a plan defers on purpose, as the pod set collects it (`status/deferred-work.ts` says how it shows). Types only. */
export interface DeferredWork {
  /** Missing pods not created because `scaleStrategy.maxUnavailable` of the App's pods are unavailable. */
  scaleUp?: { held: number; unavailable: number; limit: number };
  /** Pods labelled specified-delete left running for now, and why. */
  specifiedDelete?: { pods: string[]; why: string };
}
