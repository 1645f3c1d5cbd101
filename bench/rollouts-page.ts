/**
 * The rollouts list's response time at 10,000 Apps: the watcher's RolloutStore fed in memory through the same
 * observer calls the App watch makes (a mix of states across `--namespaces` namespaces, realistic objects with
 * canary steps, conditions and two containers), served by the page's handler on the ops server over loopback
 * HTTP. Each view is asked `--requests` times one after another; p50, p99 and max are printed, with the store's
 * heap per App.
 *
 *   node bench/rollouts-page.ts [--apps 10000] [--namespaces 500] [--requests 200]
 *
 * Views: the first page as a cluster-wide viewer; the same with `If-None-Match` (304); a state filter; the last
 * page; one namespace; and the first page as a viewer limited to 50 namespaces (a fake NamespaceViewer that
 * answers at once: the SubjectAccessReviews it stands for are cached by the board for 10 s, and not measured).
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { serveMount } from '../harness/ops-mount.ts';
import type { BoardViewer } from '../src/watcher/board-kube-auth.ts';
import { rolloutsHandler } from '../src/watcher/rollouts/handler.ts';
import { RolloutStore } from '../src/watcher/rollouts/store.ts';

const { values: args } = parseArgs({
  options: { apps: { type: 'string', default: '10000' }, namespaces: { type: 'string', default: '500' }, requests: { type: 'string', default: '200' } },
});
const APPS = Number(args.apps);
const NAMESPACES = Number(args.namespaces);
const REQUESTS = Number(args.requests);

const CONDITIONS: Record<string, { type: string; status: string; reason?: string; message: string }[]> = {
  aborted: [{ type: 'Aborted', status: 'True', reason: 'AnalysisFailed', message: 'check error-rate failed: 0.12 > 0.05 at step 2' }],
  held: [{ type: 'RolloutHeld', status: 'True', reason: 'AdmissionRefused', message: 'the apiserver would refuse pods of revision web-7d9f: quota exceeded' }],
  paused: [{ type: 'Paused', status: 'True', reason: 'CanaryPause', message: 'canary step 1: paused until someone resumes' }],
  rolling: [{ type: 'Progressing', status: 'True', reason: 'CanaryStep', message: 'canary step 2 of 4' }],
  complete: [{ type: 'Progressing', status: 'False', reason: 'RolloutComplete', message: 'every pod runs revision web-1' }],
};
const MIX = ['complete', 'complete', 'complete', 'complete', 'complete', 'complete', 'rolling', 'rolling', 'paused', 'held', 'aborted'];

function app(i: number): object {
  const state = MIX[i % MIX.length] ?? 'complete';
  const update = state === 'complete' ? 'rev-1' : 'rev-2';
  return {
    apiVersion: 'apps.ebb.dev/v1alpha1',
    kind: 'App',
    metadata: { namespace: `team-${String(i % NAMESPACES).padStart(4, '0')}`, name: `app-${i}`, uid: `uid-${i}`, resourceVersion: String(1000 + i) },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: `app-${i}` } },
      template: {
        spec: {
          containers: [
            { name: 'web', image: `registry.example.com/team/web:${update}` },
            { name: 'proxy', image: 'registry.example.com/envoy:v1.31' },
          ],
        },
      },
      updateStrategy: { rollingUpdate: { canary: { steps: [{ replicas: 1 }, { analysis: ['error-rate'] }, { pause: {} }, { replicas: '100%' }] } } },
    },
    status: {
      replicas: 3,
      readyReplicas: 3,
      updatedReplicas: state === 'complete' ? 3 : 1,
      currentRevision: 'rev-1',
      updateRevision: update,
      canary: { step: 1 },
      conditions: CONDITIONS[state],
    },
  };
}

const limited: BoardViewer = {
  kind: 'namespaces',
  allowed: (nss) => Promise.resolve(new Set([...nss].filter((n) => Number(n.slice(5)) < 50))),
};

async function main(): Promise<void> {
  const store = new RolloutStore();
  global.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  for (let i = 0; i < APPS; i++) {
    const o = app(i) as { metadata: { namespace: string; name: string } };
    store.seen(`App ${o.metadata.namespace}/${o.metadata.name}`, o);
  }
  global.gc?.();
  const heapPerApp = (process.memoryUsage().heapUsed - heapBefore) / APPS;

  let grant: BoardViewer = 'read';
  const handler = rolloutsHandler({ base: '/rollouts', store, gate: () => Promise.resolve(grant) });
  const ops = await serveMount('/rollouts', handler);
  const base = `${ops.url}/rollouts/`;
  const first = await fetch(base);
  const etag = first.headers.get('etag') ?? '';
  const bytes = (await first.text()).length;
  const lastPage = Math.ceil(APPS / 50);

  const views: { name: string; url: string; headers?: Record<string, string>; grant?: BoardViewer; status: number }[] = [
    { name: 'first page, every namespace', url: base, status: 200 },
    { name: 'first page, If-None-Match (304)', url: base, headers: { 'if-none-match': etag }, status: 304 },
    { name: 'state=held', url: `${base}?state=held`, status: 200 },
    { name: `last page (${lastPage})`, url: `${base}?page=${lastPage}`, status: 200 },
    { name: 'one namespace', url: `${base}?namespace=team-0007`, status: 200 },
    { name: 'first page, viewer of 50 namespaces', url: base, grant: limited, status: 200 },
  ];
  console.log(
    `${APPS} Apps in ${NAMESPACES} namespaces; store heap ≈ ${(heapPerApp / 1024).toFixed(2)} KiB per App${global.gc ? '' : ' (run with --expose-gc for a steadier figure)'}; first page ${(bytes / 1024).toFixed(0)} KiB`,
  );
  console.log('view | p50 ms | p99 ms | max ms');
  for (const v of views) {
    grant = v.grant ?? 'read';
    const times: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      const res = await fetch(v.url, { headers: v.headers ?? {} });
      await res.arrayBuffer();
      times.push(performance.now() - t0);
      if (res.status !== v.status) throw new Error(`${v.name}: status ${res.status}, expected ${v.status}`);
    }
    times.sort((a, b) => a - b);
    const q = (p: number): string => (times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0).toFixed(1);
    console.log(`${v.name} | ${q(0.5)} | ${q(0.99)} | ${(times.at(-1) ?? 0).toFixed(1)}`);
  }
  await ops.close();
}

await main();
