/** One SubjectAccessReview for Bull Board: may this user (as a TokenReview named it) do this? */
import type { KubeRest } from '../kube/rest.ts';

/** The user a TokenReview answers. */
export interface ReviewedUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** What is asked about: a verb on a resource, in a namespace (undefined: every namespace) and of one name (undefined: any). */
export interface ResourceAttributes {
  verb: string;
  group: string;
  resource: string;
  namespace: string | undefined;
  name: string | undefined;
}

/** What a user must be allowed to `get` to open the board. */
export interface BoardAccess {
  /** API group; '' for the core group. */
  readonly group: string;
  readonly resource: string;
  /** undefined: cluster-wide (every namespace, for a namespaced resource). */
  readonly namespace: string | undefined;
  /** undefined: any object of the resource. */
  readonly name: string | undefined;
}

/** `resource[.group]` (e.g. `apps.apps.ebb.dev`, `services`) and the optional namespace and name, as settings give them. */
export function boardAccessOf(resourceDotGroup: string, namespace: string | undefined, name: string | undefined): BoardAccess {
  const dot = resourceDotGroup.indexOf('.');
  const resource = dot < 0 ? resourceDotGroup : resourceDotGroup.slice(0, dot);
  const group = dot < 0 ? '' : resourceDotGroup.slice(dot + 1);
  return { group, resource, namespace, name };
}

export const reviewRef = (group: string, resource: string): { group: string; version: string; resource: string } => ({ group, version: 'v1', resource });

/** Whether the apiserver allows `user` the access `attrs` describe. */
export async function subjectAllowed(rest: KubeRest, user: ReviewedUser, attrs: ResourceAttributes, signal?: AbortSignal): Promise<boolean> {
  const sar = await rest.create<{ status?: { allowed?: boolean; denied?: boolean } }>(
    reviewRef('authorization.k8s.io', 'subjectaccessreviews'),
    {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, resourceAttributes: attrs },
    },
    {},
    signal,
  );
  return sar.status?.allowed === true && sar.status.denied !== true;
}
