/**
 * The simulated kubelet's realistic profile against a real kubelet: the same bare pods of the sandbox's sample
 * app (an HTTP readiness probe every 1 s, grace `--grace`), bound by name to the sandbox's first real node and to
 * a simulated node running `realisticProfile`, N samples of every step on each (lib/calibrate-steps.ts, the two
 * sides interleaved sample by sample so that both see the same load). Prints, per step, the real median
 * (min–max), the simulated one, and simulated ÷ real.
 *
 *   node bench/realnode-calibrate.ts [--samples 5] [--grace 1] [--real-nodes 1] [--no-volume] [--json out.json]
 *
 * `--real-nodes 0` measures the simulated side alone (no root needed). With a real node it needs root and the
 * real-node packages (bench/README.md) and the machine's real-node slot.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger } from '../src/common/log.ts';
import { KubeRest, loadKubeConfig } from '../src/kube/rest.ts';
import { realisticProfile } from '../harness/sandbox/node/timings.ts';
import { startSandbox } from '../harness/sandbox/sandbox.ts';
import { abortable, freshNamespace, interruptSignal, runToExit, startRealEnv } from './lib/realnode-env.ts';
import { CalibrationNode, STEPS, type CalibrationImages, type StepName, type StepSamples } from './lib/calibrate-steps.ts';
import { median, medianSpread, table } from './lib/report.ts';

const { values: opt } = parseArgs({
  options: {
    samples: { type: 'string', default: '5' },
    grace: { type: 'string', default: '1' },
    'real-nodes': { type: 'string', default: '1' },
    'no-volume': { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});
const SAMPLES = Number(opt.samples);
const REAL = Number(opt['real-nodes']) > 0;
const progress = (msg: string): void => void process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`);
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const s2 = (ms: number): string => (ms / 1000).toFixed(2);
const IMAGE_REPO = 'ebb/app';

interface Env {
  rest: KubeRest;
  sim: string;
  /** The real node's name, when there is one. */
  real?: string;
  images: (side: 'real' | 'sim') => CalibrationImages;
  stop(): Promise<void>;
}

/** A sandbox with a real node (its registry's images), or the simulated node alone (any reference pulls). */
async function startEnv(dir: string, signal: AbortSignal): Promise<Env> {
  if (!REAL) {
    const sb = await startSandbox({ dir, nodes: 1, log: createLogger('bench', 'warn'), signal, timings: realisticProfile });
    const sim = sb.nodeNames[0] ?? 'sim-node-0';
    return {
      rest: new KubeRest(loadKubeConfig(sb.kubeconfig)),
      sim,
      images: () => simImages('registry.example.com'),
      stop: () => sb.stop(),
    };
  }
  const env = await startRealEnv({ dir, daemon: false, signal, realNodes: 1 });
  const sim = env.sb.nodeNames[0] ?? 'sim-node-0';
  env.sb.sim.setTimings(sim, realisticProfile);
  const ref = (tag: string): string => {
    const r = env.sb.real?.images.get(`${IMAGE_REPO}:${tag}`);
    if (!r) throw new Error(`the sandbox registry has no ${IMAGE_REPO}:${tag}`);
    return r;
  };
  const realImages: CalibrationImages = {
    a: ref('v1'),
    b: ref('v2'),
    absent: async () => {
      await env.cri.removeImage(ref('v3'), { signal });
      return ref('v3');
    },
  };
  return { rest: env.rest, sim, real: env.node.name, images: (side) => (side === 'real' ? realImages : simImages(env.registry)), stop: () => env.stop() };
}

/** The simulated node's images: the same two tags, and a tag never used before as the absent image. */
function simImages(registry: string): CalibrationImages {
  let n = 0;
  return {
    a: `${registry}/${IMAGE_REPO}:v1`,
    b: `${registry}/${IMAGE_REPO}:v2`,
    absent: () => Promise.resolve(`${registry}/${IMAGE_REPO}:cal-${process.pid}-${n++}`),
  };
}

function report(real: StepSamples, sim: StepSamples): string {
  const rows = (Object.keys(STEPS) as StepName[]).map((step) => {
    const r = real[step] ?? [];
    const s = sim[step] ?? [];
    const ratio = r.length > 0 && s.length > 0 ? median(s) / median(r) : Number.NaN;
    const within = Number.isNaN(ratio) ? '–' : Math.abs(ratio - 1) <= 0.2 ? 'yes' : 'no';
    return [STEPS[step], medianSpread(r, s2), medianSpread(s, s2), Number.isNaN(ratio) ? '–' : ratio.toFixed(2), within];
  });
  return table(['step', 'real s', 'simulated s', 'sim ÷ real', 'within 20 %'], rows);
}

async function main(): Promise<void> {
  const signal = interruptSignal();
  const dir = await mkdtemp(join(tmpdir(), 'ebb-calibrate-'));
  progress(`sandbox in ${dir}; ${SAMPLES} samples, real node ${REAL ? 'yes' : 'no'}; load ${load()}`);
  const env = await abortable(startEnv(dir, signal), signal);
  const real: StepSamples = {};
  const sim: StepSamples = {};
  const loads: string[] = [load()];
  try {
    const ns = await freshNamespace(env.rest, 'calibrate', signal);
    const nodes: { side: 'real' | 'sim'; node: CalibrationNode; into: StepSamples }[] = [];
    if (env.real)
      nodes.push({
        side: 'real',
        node: new CalibrationNode({ rest: env.rest, ns, node: env.real, side: 'real', images: env.images('real'), graceSeconds: Number(opt.grace), signal }),
        into: real,
      });
    nodes.push({
      side: 'sim',
      node: new CalibrationNode({ rest: env.rest, ns, node: env.sim, side: 'sim', images: env.images('sim'), graceSeconds: Number(opt.grace), signal }),
      into: sim,
    });
    for (const n of nodes) {
      await n.node.start();
      await abortable(n.node.warmUp(), signal);
    }
    for (let i = 0; i < SAMPLES; i++) {
      for (const n of nodes) {
        await abortable(n.node.sample(i, n.into, !opt['no-volume']), signal);
        progress(`sample ${i + 1}/${SAMPLES} on the ${n.side} node done; load ${load()}`);
      }
      loads.push(load());
    }
    for (const n of nodes) await n.node.stop();
  } finally {
    await env.stop();
  }
  const out = [
    `## Kubelet steps: real node against the simulated realisticProfile`,
    ``,
    `${SAMPLES} samples per step and side, grace ${opt.grace} s; 1-minute load ${loads.map((l) => l.split(' ')[0]).join(', ')}.`,
    ``,
    report(real, sim),
  ].join('\n');
  process.stdout.write(`${out}\n`);
  if (opt.json) await writeFile(opt.json, JSON.stringify({ samples: SAMPLES, grace: Number(opt.grace), loads, real, sim, profile: realisticProfile }, null, 2));
  await rm(dir, { recursive: true, force: true });
}

void runToExit(main);
