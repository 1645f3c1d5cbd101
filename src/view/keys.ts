/**
 * Where the view lives in Redis: one hash per App (its object, its pods, the resourceVersions of ebb's own
 * writes), and one hash of the watch sources whose last list is complete. Both under the queue prefix, whose
 * `{hash tag}` keeps them in the queues' Redis Cluster slot (a read is one MULTI of two keys).
 */

/** The hash of App `namespace/name`. */
export const viewKey = (prefix: string, namespace: string, name: string): string => `${prefix}:view:app:${namespace}/${name}`;

/** The hash of watch sources (field: source name, value: the id of its complete list) and oversized pods. */
export const listsKey = (prefix: string): string => `${prefix}:view:lists`;

/** Fields of an App's hash. */
export const Field = {
  /** The App (an entry). */
  app: 'a',
  /** Pod `name` (an entry). */
  pod: (name: string): string => `p:${name}`,
  podPrefix: 'p:',
  /** The resourceVersion of ebb's last write of the App (spec or status). */
  wroteApp: 'w:a',
  /** The resourceVersion of ebb's last create or patch of pod `name`. */
  wrotePod: (name: string): string => `w:p:${name}`,
  wrotePodPrefix: 'w:p:',
  /** The uid of pod `name` ebb deleted last. */
  deletedPod: (name: string): string => `w:d:${name}`,
  deletedPodPrefix: 'w:d:',
  /** `<ms> <unwatched>`: when a worker last listed the App's pods fresh, and whether the list held pods the watcher does not see. */
  checked: 'w:c',
  /** How many pod fields (live pods and tombstones) the hash holds: at the watcher's cap, no new one is added. */
  podCount: 'n',
  /** An entry `{"l":<list>,"big":true}`: a pod of that list was left out for the cap (the App reads fresh). */
  tooMany: 'x',
} as const;

/** A field of the lists hash: a pod the watcher left out for its size (its App unknown): its namespace reads fresh. */
export const oversizedPodField = (namespace: string, name: string): string => `big:${namespace}/${name}`;
