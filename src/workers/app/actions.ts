/** The actions, from the App reconcile's ground floor (`model/actions.ts`), under the path they had before it existed. */
export type * from './model/actions.ts';
