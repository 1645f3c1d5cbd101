/**
 * What each component's service account may and may not do once deploy/ is installed: one table, checked
 * against the sandbox apiserver by test/integration/deploy/install.test.ts (SelfSubjectAccessReview with each
 * account's own token, and real requests for the admission policy), and written into docs/install.md
 * by `make access-docs` (a unit test fails when the page differs).
 */

export type Component = 'watcher' | 'worker' | 'daemon';

/** A resource as RBAC names it: its API group ('' is the core group), plural name and subresource. */
export interface Resource {
  group: string;
  resource: string;
  subresource?: string;
}

/**
 * One row: `verbs` on `on`, allowed or denied. `by: 'rbac'` rows are authorization (every verb is asked with
 * a SelfSubjectAccessReview, in all namespaces and in one); `by: 'admission'` rows are ValidatingAdmissionPolicies,
 * which RBAC cannot express: `object` says which object is written (whose ImageList, whose pod).
 */
export interface AccessRow {
  component: Component;
  verbs: readonly string[];
  on: Resource;
  allowed: boolean;
  by: 'rbac' | 'admission';
  object?:
    | 'its own node'
    | 'another node'
    | 'any node, token bound to no pod'
    | 'an App owns'
    | 'no App owns'
    | 'in kube-system'
    | 'an entry naming a Secret it may not get'
    | "a rollouts page's action"
    | 'any other App change';
  why: string;
}

const EBB = 'apps.ebb.dev';
const app: Resource = { group: EBB, resource: 'apps' };
const appStatus: Resource = { group: EBB, resource: 'apps', subresource: 'status' };
const imageLists: Resource = { group: EBB, resource: 'imagelists' };
const imageListStatus: Resource = { group: EBB, resource: 'imagelists', subresource: 'status' };
const pullJobs: Resource = { group: EBB, resource: 'imagepulljobs' };
const pullJobStatus: Resource = { group: EBB, resource: 'imagepulljobs', subresource: 'status' };
const checkTemplates: Resource = { group: EBB, resource: 'checktemplates' };
const clusterCheckTemplates: Resource = { group: EBB, resource: 'clusterchecktemplates' };
const core = (resource: string, subresource?: string): Resource => ({ group: '', resource, ...(subresource ? { subresource } : {}) });
const events: Resource = { group: 'events.k8s.io', resource: 'events' };
const revisions: Resource = { group: 'apps', resource: 'controllerrevisions' };
const WRITE = ['create', 'update', 'patch', 'delete'];
const ALL = ['get', 'list', 'watch', ...WRITE];

const rbac = (component: Component, verbs: readonly string[], on: Resource, allowed: boolean, why: string): AccessRow => ({
  component,
  verbs,
  on,
  allowed,
  by: 'rbac',
  why,
});

export const ACCESS: readonly AccessRow[] = [
  rbac('watcher', ['get', 'list', 'watch'], app, true, 'lists and watches Apps, to enqueue them'),
  rbac('watcher', ['get', 'list', 'watch'], core('pods'), true, 'maps pod events to their App'),
  rbac('watcher', ['get', 'list', 'watch'], imageLists, true, 'pre-warm progress and re-pull timers'),
  rbac('watcher', ['get', 'list', 'watch'], pullJobs, true, 'lists and watches ImagePullJobs, to enqueue them'),
  rbac(
    'watcher',
    ['list', 'watch'],
    core('nodes'),
    true,
    'a node that joins or is relabelled reaches the warm pools it matches and the ImagePullJobs not finished',
  ),
  rbac(
    'watcher',
    ['patch'],
    app,
    true,
    "the rollouts page's actions: the patch `ebb rollout` writes, for a viewer a SubjectAccessReview allows to patch that App",
  ),
  rbac('watcher', ['create', 'update', 'delete'], app, false, 'the watcher creates, replaces and deletes no App'),
  rbac('watcher', WRITE, pullJobs, false, 'the watcher writes nothing'),
  rbac('watcher', ['get', ...WRITE], core('nodes'), false, 'the watcher writes nothing'),
  rbac('watcher', ['update', 'patch'], appStatus, false, 'the watcher writes nothing'),
  rbac('watcher', WRITE, core('pods'), false, 'the watcher writes nothing'),
  rbac('watcher', WRITE, imageLists, false, 'the watcher writes nothing'),
  rbac('watcher', ['create'], events, true, 'a Warning Event on an object too large to read (ObjectTooLarge), at most one per object an hour'),
  rbac('watcher', ['list'], core('events'), true, 'the rollouts page: the recent Events of an App whose page a viewer opens'),
  rbac('watcher', ['get', 'list'], core('secrets'), false, 'no Secrets'),

  rbac('worker', ['get', 'patch'], app, true, 'reads the App it reconciles'),
  rbac('worker', ['patch'], appStatus, true, 'writes the App status'),
  rbac('worker', ['get', 'list', 'create', 'patch', 'delete'], core('pods'), true, "the App's pods"),
  rbac('worker', ['patch'], core('pods', 'status'), true, 'in-place update state and readiness gate'),
  rbac('worker', ['patch'], core('pods', 'resize'), true, 'in-place resource changes'),
  rbac('worker', ['list', 'create', 'patch'], core('persistentvolumeclaims'), true, 'claims of volumeClaimTemplates'),
  rbac('worker', ['get', 'list', 'create', 'patch', 'delete'], revisions, true, "the App's revisions"),
  rbac('worker', ['create'], events, true, 'Events on the App'),
  rbac('worker', ['get', 'list', 'create', 'patch'], imageLists, true, 'pre-warm entries (server-side apply) and re-pulls'),
  rbac('worker', ['delete'], imageLists, false, 'ImageLists are per node: the worker removes only its entries'),
  rbac('worker', ['update', 'patch'], imageListStatus, false, "the status is the daemon's"),
  rbac(
    'worker',
    ALL,
    core('secrets'),
    false,
    "no Secrets but `get` of those named ebb-notify (a namespace's notification webhook); the pull-secret component grants reading and copying them; a namespace grants get on the Secrets its web analysis checks name",
  ),
  rbac('worker', ALL, core('configmaps'), false, 'a kind it does not own'),
  rbac('worker', WRITE, { group: 'apps', resource: 'deployments' }, false, 'a kind it does not own'),
  rbac('worker', WRITE, { group: 'apps', resource: 'statefulsets' }, false, 'a kind it does not own'),
  rbac('worker', ['get', 'delete'], pullJobs, true, 'reads the ImagePullJob it reconciles; deletes it after ttlSecondsAfterFinished'),
  rbac('worker', ['patch'], pullJobStatus, true, 'writes the ImagePullJob status'),
  rbac('worker', ['get', 'list'], checkTemplates, true, "the CheckTemplates an App's checks name, in the App's namespace"),
  rbac('worker', ['get', 'list'], clusterCheckTemplates, true, "the ClusterCheckTemplates an App's checks name"),
  rbac('worker', WRITE, checkTemplates, false, 'check templates are written by people'),
  rbac('worker', WRITE, clusterCheckTemplates, false, 'check templates are written by people'),
  rbac('watcher', ALL, checkTemplates, false, 'the worker reads templates when it reconciles'),
  rbac('worker', ['create', 'update', 'patch'], pullJobs, false, 'ImagePullJobs are written by people'),
  rbac('worker', ['list'], core('nodes'), true, "the nodes an ImagePullJob's selector picks, of a warm pool, and those a scale-up can use"),
  rbac('worker', ['get', ...WRITE], core('nodes'), false, 'no other access to nodes'),

  rbac('daemon', ['get', 'list', 'watch'], imageLists, true, "watches its node's ImageList"),
  rbac('daemon', ['patch'], imageListStatus, true, 'writes per-image status (own node only: see below)'),
  rbac('daemon', [...WRITE, 'deletecollection'], imageLists, false, "the spec is the worker's; ImageLists are never deleted by it"),
  rbac(
    'daemon',
    ['get', 'list', 'watch'],
    core('secrets'),
    false,
    "no Secrets (the pull-secret component grants `get` in ebb-node only, on the worker's copies)",
  ),
  rbac('daemon', ALL, core('pods'), false, 'nothing else'),
  rbac('daemon', ALL, app, false, 'nothing else'),
  rbac('daemon', ['get', 'update', 'patch'], core('nodes'), false, 'nothing else'),
  rbac('daemon', ['create'], events, false, 'nothing else'),
  rbac('daemon', ALL, core('configmaps'), false, 'nothing else'),
  {
    component: 'daemon',
    verbs: ['patch'],
    on: imageListStatus,
    allowed: true,
    by: 'admission',
    object: 'its own node',
    why: "token bound to a pod on node A, ImageList A: the token's node-name claim matches",
  },
  {
    component: 'daemon',
    verbs: ['patch'],
    on: imageListStatus,
    allowed: false,
    by: 'admission',
    object: 'another node',
    why: 'token bound to a pod on node A, ImageList B: refused by the ValidatingAdmissionPolicy ebb-daemon-own-node',
  },
  {
    component: 'daemon',
    verbs: ['patch'],
    on: imageListStatus,
    allowed: false,
    by: 'admission',
    object: 'any node, token bound to no pod',
    why: 'a token without a node-name claim writes no ImageList',
  },
  {
    component: 'watcher',
    verbs: ['patch'],
    on: app,
    allowed: true,
    by: 'admission',
    object: "a rollouts page's action",
    why: "rollingUpdate.paused, ebb's rollout.apps.ebb.dev/ annotations, the template's restart stamp (ValidatingAdmissionPolicy ebb-watcher-app-actions)",
  },
  {
    component: 'watcher',
    verbs: ['patch'],
    on: app,
    allowed: false,
    by: 'admission',
    object: 'any other App change',
    why: 'the image, replicas, labels, finalizers, owners, other annotations or rollout settings: refused by ebb-watcher-app-actions',
  },
  {
    component: 'worker',
    verbs: ['create'],
    on: core('pods'),
    allowed: true,
    by: 'admission',
    object: 'an App owns',
    why: 'a pod with an App controller reference (ValidatingAdmissionPolicy ebb-worker-app-owned)',
  },
  {
    component: 'worker',
    verbs: ['create'],
    on: core('pods'),
    allowed: false,
    by: 'admission',
    object: 'no App owns',
    why: 'pods, claims and revisions it writes are owned by an App: refused by ebb-worker-app-owned',
  },
  {
    component: 'worker',
    verbs: ['create'],
    on: core('pods'),
    allowed: false,
    by: 'admission',
    object: 'in kube-system',
    why: "nothing in kube-system or ebb's own namespaces, App-owned or not",
  },
  {
    component: 'worker',
    verbs: ['patch'],
    on: imageLists,
    allowed: false,
    by: 'admission',
    object: 'an entry naming a Secret it may not get',
    why: 'an entry names only a pull secret its writer may get (ValidatingAdmissionPolicy ebb-imagelist-pull-secrets)',
  },
];

/** `imagelists/status` */
export function resourceName(r: Resource): string {
  return r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
}

export const ACCESS_BEGIN = '<!-- access:begin -->';
export const ACCESS_END = '<!-- access:end -->';

function row(r: AccessRow): string {
  const group = r.on.group === '' ? 'core' : r.on.group;
  const resource = `\`${resourceName(r.on)}\`${r.object ? ` of ${r.object}` : ''}`;
  const access = r.allowed ? 'allowed' : r.by === 'admission' ? '**denied** (admission)' : '**denied**';
  return `| ${r.component} | ${r.verbs.join(', ')} | ${resource} | ${group} | ${access} | ${r.why.replaceAll('|', '\\|')} |`;
}

/** What goes between the markers. */
export function renderAccessTable(rows: readonly AccessRow[] = ACCESS): string {
  const head = ['| component | verbs | resource | group | access | why |', '|---|---|---|---|---|---|'];
  return `\n<!-- generated by \`make access-docs\` from test/unit/deploy/access.ts: do not edit by hand -->\n\n${[...head, ...rows.map(row)].join('\n')}\n\n`;
}

/** `page` with the region between the markers replaced by the generated table. */
export function withAccessTable(page: string): string {
  const begin = page.indexOf(ACCESS_BEGIN);
  const end = page.indexOf(ACCESS_END);
  if (begin < 0 || end < begin) throw new Error(`the page must contain ${ACCESS_BEGIN} followed by ${ACCESS_END}`);
  return `${page.slice(0, begin + ACCESS_BEGIN.length)}${renderAccessTable()}${page.slice(end)}`;
}
