/**
 * The worker's pod read in JSON and in protobuf, A/B on one sandbox: G groups of 3 running pods (an App's pods,
 * as the simulated kubelets write their status), then rounds in which each encoding LISTs every group by its
 * label selector through the worker's own pod store (after a warm-up read in each), the two encodings
 * alternating which goes first. Prints the bytes of one LIST answer in each encoding, the CPU of decoding it alone
 * (JSON.parse against the protobuf decoder, 5,000 times each), and per encoding kube-apiserver CPU-ms and this
 * process's CPU-ms per LIST (request and decode; the simulated kubelets run in this process too) and the wall
 * time of a round.
 *
 *   node bench/pod-reads.ts [--groups 100] [--rounds 20] [--parallel 8] [--nodes 4]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fetch } from 'undici';
import { startSandbox } from '../harness/sandbox/sandbox.ts';
import { createLogger } from '../src/common/log.ts';
import { waitFor } from '../src/common/wait.ts';
import { core, resourcePath } from '../src/kube/paths.ts';
import { ACCEPT_PROTOBUF, decodePodList } from '../src/kube/protobuf/envelope.ts';
import { KubeRest, loadKubeConfig } from '../src/kube/rest.ts';
import type { Pod } from '../src/kube/types.ts';
import { restAppClient } from '../src/workers/app/rest-client.ts';
import { cpuSeconds, createNamespace, inParallel } from './watcher-lib.ts';

const { values: opt } = parseArgs({
  options: {
    groups: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '20' },
    parallel: { type: 'string', default: '8' },
    nodes: { type: 'string', default: '4' },
  },
});
const GROUPS = Number(opt.groups);
const ROUNDS = Number(opt.rounds);
const PARALLEL = Number(opt.parallel);
const NS = 'reads';
const DECODES = 5000;

const podOf = (group: number, i: number): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: `g${group}-${i}`,
    labels: { 'ebb.dev/app': `g${group}`, 'ebb.dev/revision': `g${group}-6f7d9c8b5`, 'apps.kubernetes.io/pod-index': String(i) },
  },
  spec: {
    hostname: `g${group}-${i}`,
    subdomain: `g${group}`,
    readinessGates: [{ conditionType: 'ebb.dev/InPlaceUpdateReady' }],
    containers: [
      {
        name: 'app',
        image: 'registry.example/app:1',
        resources: { requests: { cpu: '10m', memory: '16Mi' } },
        readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 5 },
        env: [{ name: 'MODE', value: 'bench' }],
        ports: [{ containerPort: 8080, name: 'http' }],
      },
    ],
  },
});

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const log = (msg: string): void => void process.stdout.write(`[${new Date().toISOString()}] ${msg}\n`);

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ebb-reads-'));
  const sb = await startSandbox({ dir, nodes: Number(opt.nodes), log: createLogger('bench', 'warn') });
  try {
    const apiserver = sb.controlPlane.children.find((c) => c.name === 'kube-apiserver')?.pid;
    if (apiserver === undefined) throw new Error('no kube-apiserver pid');
    const config = loadKubeConfig(sb.kubeconfig);
    const json = new KubeRest(config);
    const proto = new KubeRest(config, { protobuf: true });
    await createNamespace(json, NS);
    await waitFor(() => json.get(core('serviceaccounts', NS, 'default')), { timeoutMs: 60_000, what: 'default ServiceAccount' });
    const pods = Array.from({ length: GROUPS }, (_, g) => [0, 1, 2].map((i) => podOf(g, i))).flat();
    await inParallel(pods, 16, (p) => json.create(core('pods', NS), p));
    await waitFor(
      async () => {
        const { items } = await json.list<Pod>(core('pods', NS));
        // The readiness gate (no one sets it here) keeps Ready False: containers ready is as far as they go.
        const ready = items.filter((p) => p.status?.conditions?.some((c) => c.type === 'ContainersReady' && c.status === 'True')).length;
        return ready === pods.length ? true : undefined;
      },
      { timeoutMs: 300_000, what: `${pods.length} pods with containers ready`, intervalMs: 2_000 },
    );
    log(`${pods.length} pods with containers ready; load ${load()}`);

    const { headers, dispatcher } = await json.credentials();
    const url = json.url(resourcePath(core('pods', NS)), { labelSelector: 'ebb.dev/app=g0' });
    const body = async (accept: string): Promise<Buffer> =>
      Buffer.from(await (await fetch(url, { headers: { ...headers, accept }, dispatcher })).arrayBuffer());
    const [jsonBody, protoBody] = [await body('application/json'), await body(ACCEPT_PROTOBUF)];
    log(`one LIST of 3 pods: JSON ${jsonBody.byteLength} bytes, protobuf ${protoBody.byteLength} bytes`);
    // The decode alone, without the request: the same answer decoded DECODES times (after a warm-up).
    const decodeMs = (decode: () => unknown): number => {
      for (let i = 0; i < 500; i++) decode();
      const t = process.cpuUsage();
      for (let i = 0; i < DECODES; i++) decode();
      const u = process.cpuUsage(t);
      return (u.user + u.system) / 1000 / DECODES;
    };
    const jsonText = jsonBody.toString('utf8');
    log(
      `decode of that answer, CPU-ms each: JSON.parse ${decodeMs(() => JSON.parse(jsonText)).toFixed(4)}, ` +
        `protobuf ${decodeMs(() => decodePodList(protoBody)).toFixed(4)}`,
    );

    const signal = AbortSignal.timeout(3_600_000);
    const clients = { json: restAppClient(json, signal), protobuf: restAppClient(proto, signal) };
    const totals = { json: { api: 0, self: 0, ms: 0, lists: 0 }, protobuf: { api: 0, self: 0, ms: 0, lists: 0 } };
    // One round of each, not counted: loads the schema and warms the decoders and the JIT.
    for (const enc of ['json', 'protobuf'] as const)
      await inParallel([0, 1, 2, 3, 4, 5, 6, 7], PARALLEL, (g) => clients[enc].pods.list(NS, `ebb.dev/app=g${g}`));
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (['json', 'protobuf'] as const) : (['protobuf', 'json'] as const);
      for (const enc of order) {
        const [api0, self0, t0] = [await cpuSeconds(apiserver), process.cpuUsage(), Date.now()];
        await inParallel(
          Array.from({ length: GROUPS }, (_, g) => g),
          PARALLEL,
          async (g) => {
            const got = await clients[enc].pods.list(NS, `ebb.dev/app=g${g}`);
            if (got.length !== 3) throw new Error(`group ${g}: ${got.length} pods`);
          },
        );
        const self = process.cpuUsage(self0);
        const t = totals[enc];
        t.api += (await cpuSeconds(apiserver)) - api0;
        t.self += (self.user + self.system) / 1e6;
        t.ms += Date.now() - t0;
        t.lists += GROUPS;
      }
      log(`round ${r + 1}/${ROUNDS} done; load ${load()}`);
    }
    process.stdout.write(
      '\n| encoding | LISTs | kube-apiserver CPU-ms per LIST | client CPU-ms per LIST | wall ms per round |\n| --- | --- | --- | --- | --- |\n',
    );
    for (const [enc, t] of Object.entries(totals)) {
      process.stdout.write(
        `| ${enc} | ${t.lists} | ${((t.api * 1000) / t.lists).toFixed(3)} | ${((t.self * 1000) / t.lists).toFixed(3)} | ${(t.ms / ROUNDS).toFixed(0)} |\n`,
      );
    }
  } finally {
    await sb.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
