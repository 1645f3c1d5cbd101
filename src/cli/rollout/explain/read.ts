/**
 * What `ebb rollout explain` reads from the apiserver: the App, its pods, the ImageLists holding its pre-warm
 * entries, and the plan a reconcile would make now: the worker's own plan loop (`planFrom`) on a client that
 * cannot write, with no dry run (a held rollout is told from its condition), no pull budget (every pre-warm
 * request the plan wants is shown), and a measure desk that only reads finished measurements (one not
 * finished is pending, as in the worker: the plan waits for it). A source it may not read becomes a note.
 */
import type { App } from '../../../api/app.ts';
import type { ImageList } from '../../../api/image-list.ts';
import { errorFirstLine } from '../../../common/errors.ts';
import { isKubeError } from '../../../kube/errors.ts';
import type { KubeRest } from '../../../kube/rest.ts';
import type { ClusterStored, Pod } from '../../../kube/types.ts';
import type { Action } from '../../../workers/app/model/actions.ts';
import type { AppClient } from '../../../workers/app/model/client.ts';
import { planFrom } from '../../../workers/app/plan-loop.ts';
import { readMore, readObserved } from '../../../workers/app/read.ts';
import type { MeasureDesk } from '../../../workers/app/model/analysis-io.ts';
import { pino } from 'pino';
import { restAppClient } from '../../../workers/app/rest-client.ts';
import type { Wait } from '../../../workers/types.ts';

/** Thrown by every write of the read-only client: explain never writes. */
export class ReadOnlyError extends Error {
  override readonly name = 'ReadOnlyError';
  readonly code = 'ReadOnly';
}

const refuse = (): Promise<never> => Promise.reject(new ReadOnlyError('ebb rollout explain writes nothing'));

/**
 * The reconcile's client with every write refused: only its reads (get and list) reach the apiserver, and
 * `measured` (a desk that only reads) gives the finished measurements.
 */
export function readOnlyClient(rest: KubeRest, signal: AbortSignal, measured?: MeasureDesk): AppClient {
  return readOnly(restAppClient(rest, signal), measured);
}

/** `c` with every write refused (ReadOnlyError) and, when given, `measured` as its measure desk. */
export function readOnly(c: AppClient, measured?: MeasureDesk): AppClient {
  return {
    apps: { get: (ns, name) => c.apps.get(ns, name), patch: refuse, patchStatus: refuse },
    pods: { get: (ns, name) => c.pods.get(ns, name), list: (ns, sel) => c.pods.list(ns, sel), create: refuse, patch: refuse, delete: refuse },
    podPatches: { patch: refuse },
    claims: { list: (ns, sel) => c.claims.list(ns, sel), create: refuse, patch: refuse },
    revisions: { get: (ns, name) => c.revisions.get(ns, name), list: (ns, sel) => c.revisions.list(ns, sel), create: refuse, patch: refuse, delete: refuse },
    events: { record: refuse },
    imageLists: { list: (sel) => c.imageLists.list(sel), apply: refuse },
    nodes: { list: (sel) => c.nodes.list(sel) },
    checkTemplates: c.checkTemplates,
    dryRun: { pod: refuse, claim: refuse },
    ...(measured ? { measureDesk: measured } : {}),
  };
}

export interface ExplainReads {
  app: App;
  pods: Pod[];
  imageLists: ImageList[] | undefined;
  plan: { actions: Action[]; wait?: Wait | undefined } | undefined;
  notes: string[];
}

/** The plan loop logs nothing on explain's terminal. */
const QUIET = pino({ level: 'silent' });

const why = (err: unknown): string => (isKubeError(err, 'Forbidden') ? 'forbidden to this user' : errorFirstLine(err));

/**
 * Reads everything once, at `now`. The App itself must be readable (its absence is the apiserver's error, as
 * for every rollout command); the rest degrades to a note.
 */
export async function readForExplain(client: AppClient, namespace: string, name: string, now: Date): Promise<ExplainReads> {
  const observed = await readObserved(client, namespace, name, { claims: 'lazy', revisions: 'lazy' }).catch((err: unknown) => {
    if (isKubeError(err, 'NotFound')) return undefined;
    throw err;
  });
  if (!observed) throw new Error(`apps.apps.ebb.dev "${name}" not found in namespace "${namespace}"`);
  const notes: string[] = [];
  let imageLists: ClusterStored<ImageList>[] | undefined;
  try {
    imageLists = (await readMore(client, observed, 'imageLists')).imageLists;
  } catch (err) {
    notes.push(`ImageLists not read (${why(err)}): pre-warm is shown from the App's status only`);
  }
  let planned: ExplainReads['plan'];
  try {
    const { plan } = await planFrom(client, { ...observed, imageLists }, () => now, { log: QUIET });
    planned = { actions: plan.actions, wait: plan.wait };
  } catch (err) {
    notes.push(`the next writes were not planned (${why(err)}); what comes next is told from the status and the queue only`);
  }
  return { app: observed.app, pods: observed.pods, imageLists, plan: planned, notes };
}
