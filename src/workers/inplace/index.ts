/**
 * In-place pod updates (docs/architecture.md), and the one place that decides per pod between updating in
 * place and recreating: `decideUpdateMethod` (the template diff, `canUpdateInPlace`, under the App's policy,
 * `decideUpdate`). The App planner drives each in-place pod with `nextInPlaceStep` + `applyInPlaceStep`, counts
 * `podIsUpdatingInPlace` pods as unavailable, builds pods with `withInPlaceReadinessGate` and sets the gate on
 * new pods with `markGateReady` when `needsGateReady`.
 */
export { canUpdateInPlace, displayPath, type DiffOptions } from './diff.ts';
export { decideUpdate, fallbackTexts, UpdatePolicy, type FallbackLog, type FallbackTexts, type NotInPlace, type UpdateDecision } from './decide.ts';
export { completesUpdate, GRACE_PERIOD_WAIT, PROGRESS_WAIT, nextInPlaceStep, SAFETY_RECHECK_MS, stepWait, type InPlaceStep } from './step.ts';
export { applyInPlaceStep, markGateReady, type PatchClient } from './executor.ts';
export { InPlaceError } from './patches.ts';
export { IN_PLACE_GATE, needsGateReady, withInPlaceReadinessGate } from './gate.ts';
export { inPlaceStatus, podIsUpdatingInPlace, type InPlacePhase, type InPlaceStatus } from './status.ts';
export { qosClass, type QosClass } from '../../common/quantity.ts';
export { readState, type InPlaceState } from './state.ts';
export { quoteKubeletMessage, resizeRefusal } from './completion.ts';
export { decideUpdateMethod } from './update-method.ts';
export { EMPTY_PLAN, type DiffResult, type InPlacePlan, type InPlaceTarget, type TemplateLike } from './types.ts';
export { refusalReason, refusedResize, resizeRefusedTexts } from './refused-resize.ts';
