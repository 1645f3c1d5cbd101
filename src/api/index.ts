/** The ebb API (group apps.ebb.dev, version v1alpha1): kinds, types, keys and helpers, in one import. */
export * from './group.ts';
export * from './keys.ts';
export * from './meta.ts';
export * from './app.ts';
export * from './app-spec.ts';
export * from './app-status.ts';
export { APP_NAME_MAX_LENGTH } from './app-rules.ts';
export * from './pod-template.ts';
export * from './update-strategy.ts';
export * from './rollout-abort.ts';
export * from './image-list.ts';
export * from './image-ref.ts';
export * from './defaults.ts';
export * from './int-or-percent.ts';
