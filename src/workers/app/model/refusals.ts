/** What a dry run before a delete found (`admission/dry-run.ts`): the revisions whose replacements would be refused. */

/** Why the apiserver would refuse a revision's pods or claims: its error code and message (which names the field). */
export interface Refusal {
  code: string;
  message: string;
}

/** Revision name → refusal, for the revisions a dry run found refused. */
export type Refusals = ReadonlyMap<string, Refusal>;
