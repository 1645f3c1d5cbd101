/** The soak's phases: create and settle the Apps, the edit phase with its chaos, and the final settle. */
import { appRef } from '../../src/api/group.ts';
import { errorMessage } from '../../src/common/errors.ts';
import { sleep, waitFor } from '../../src/common/wait.ts';
import { isKubeError } from '../../src/kube/errors.ts';
import { core } from '../../src/kube/paths.ts';
import type { KubeRest } from '../../src/kube/rest.ts';
import { appManifest, applyEdit, convergence, pick, randomEdit, rng, type EditKind, type SoakApp } from './soak-apps.ts';
import type { Fleet } from './soak-fleet.ts';
import type { SoakRedis } from './soak-redis.ts';
import type { Sample } from './soak-report.ts';

export interface Timeline {
  events: { at: number; what: string }[];
}

export interface PhaseEnv {
  rest: KubeRest;
  apps: SoakApp[];
  fleet: Fleet;
  redis: SoakRedis;
  timeline: Timeline;
  samples: Sample[];
  sample(notConverged?: number): Promise<Sample>;
  say(msg: string): void;
  signal: AbortSignal;
}

export interface EditPlan {
  editMs: number;
  killMs: number;
  redisMs: number;
  sampleMs: number;
  editsPerMinute: number;
  seed: number;
}

export interface EditStats {
  byKind: Record<string, number>;
  failedPatches: number;
}

export const editStats: EditStats = { byKind: {}, failedPatches: 0 };

export async function ensureNamespaces(rest: KubeRest, namespaces: string[], signal: AbortSignal): Promise<void> {
  for (const ns of namespaces) {
    await rest.create(core('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, {}, signal).catch((err: unknown) => {
      if (!isKubeError(err, 'AlreadyExists')) throw err;
    });
    await waitFor(() => rest.get(core('serviceaccounts', ns, 'default'), signal), { timeoutMs: 60_000, signal, what: `default ServiceAccount in ${ns}` });
  }
}

/** Creates every App (10 at a time) and waits until all are converged; returns how long that took. */
export async function createAll(rest: KubeRest, apps: SoakApp[], say: (m: string) => void, signal: AbortSignal): Promise<{ ms: number }> {
  const t0 = Date.now();
  for (let i = 0; i < apps.length; i += 10) {
    await Promise.all(apps.slice(i, i + 10).map((a) => rest.create(appRef(a.namespace), appManifest(a), {}, signal)));
  }
  say(`${apps.length} Apps created in ${((Date.now() - t0) / 1000).toFixed(1)} s; waiting until all are converged`);
  const left = await waitConverged(rest, apps, 900_000, say, signal);
  if (left.size > 0) throw new Error(`Apps did not converge after creation: ${[...left.keys()].slice(0, 10).join(', ')}`);
  const ms = Date.now() - t0;
  say(`all ${apps.length} Apps converged ${(ms / 1000).toFixed(1)} s after the first create`);
  return { ms };
}

async function waitConverged(
  rest: KubeRest,
  apps: SoakApp[],
  timeoutMs: number,
  say: (m: string) => void,
  signal: AbortSignal,
): Promise<Map<string, string[]>> {
  const deadline = Date.now() + timeoutMs;
  let lastSay = Date.now();
  for (;;) {
    const left = await convergence(rest, apps, signal).catch(() => undefined);
    if (left?.size === 0) return left;
    if (left && (Date.now() >= deadline || signal.aborted)) return left;
    if (left && Date.now() - lastSay > 60_000) {
      lastSay = Date.now();
      say(
        `${left.size} Apps not converged yet, e.g. ${[...left.entries()]
          .slice(0, 3)
          .map(([k, v]) => `${k}: ${v.join('; ')}`)
          .join(' | ')}`,
      );
    }
    await sleep(3_000, signal);
  }
}

/** A patch that is retried a few times (the apiserver is never restarted, but a timeout may still happen). */
async function patchWithRetry(rest: KubeRest, a: SoakApp, kind: EditKind, signal: AbortSignal): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return await applyEdit(rest, a, kind, signal);
    } catch (err) {
      if (i >= 4 || signal.aborted) throw err;
      await sleep(500, signal);
    }
  }
}

/** Runs `fn` every `everyMs` (first after `firstMs`) until `until`. */
async function every(everyMs: number, firstMs: number, until: number, signal: AbortSignal, fn: () => Promise<void>): Promise<void> {
  let next = Date.now() + firstMs;
  while (!signal.aborted) {
    const wait = next - Date.now();
    if (next >= until) return;
    if (wait > 0) await sleep(wait, signal).catch(() => undefined);
    if (signal.aborted || Date.now() >= until) return;
    await fn();
    next += everyMs;
  }
}

export async function editPhase(env: PhaseEnv, plan: EditPlan): Promise<void> {
  const { rest, apps, fleet, redis, timeline, signal, say } = env;
  const r = rng(plan.seed * 7919 + 1);
  const t0 = Date.now();
  const until = t0 + plan.editMs;
  const mark = (what: string): void => {
    timeline.events.push({ at: Date.now(), what });
    say(what);
  };
  let redisRestarts = 0;
  const loops = [
    every(60_000 / plan.editsPerMinute, 0, until, signal, async () => {
      const a = pick(r, apps);
      const kind = randomEdit(a, r);
      editStats.byKind[kind] = (editStats.byKind[kind] ?? 0) + 1;
      await patchWithRetry(rest, a, kind, signal).catch((err: unknown) => {
        editStats.failedPatches++;
        say(`edit ${kind} of ${a.namespace}/${a.name} failed: ${errorMessage(err)}`);
      });
    }),
    every(plan.killMs, plan.killMs, until, signal, async () => {
      const victim = fleet.victim.name;
      await fleet.killVictim(signal).catch((err: unknown) => say(`replacing a killed worker failed: ${errorMessage(err)}`));
      mark(`worker ${victim} SIGKILLed, replaced by ${fleet.victim.name}`);
    }),
    every(plan.redisMs, plan.redisMs / 2, until, signal, async () => {
      const hard = redisRestarts++ % 2 === 1;
      const { downMs } = await redis.restart(hard, signal);
      mark(`Redis restarted (${hard ? 'SIGKILL' : 'SIGTERM'}, same port and AOF), down ${downMs} ms`);
    }),
    every(5_000, 5_000, until, signal, () => fleet.reapCrashes(signal)),
    every(plan.sampleMs, plan.sampleMs, until + 1, signal, async () => {
      const left = await convergence(rest, apps, signal).catch(() => undefined);
      env.samples.push(await env.sample(left?.size));
    }),
  ];
  await Promise.all(loops);
  say(`edit phase over: ${JSON.stringify(editStats.byKind)}, ${editStats.failedPatches} failed patches`);
}

/** Resumes every paused App (the last edit of the run), then waits until all are converged or `boundMs` passes. */
export async function settle(
  rest: KubeRest,
  apps: SoakApp[],
  boundMs: number,
  say: (m: string) => void,
  signal: AbortSignal,
): Promise<{ ms: number; remaining: Map<string, string[]>; resumed: number }> {
  const paused = apps.filter((a) => a.paused);
  for (const a of paused) {
    a.paused = false;
    await patchWithRetry(rest, a, 'resume', signal);
  }
  const t0 = Date.now();
  say(`resumed ${paused.length} paused Apps; waiting up to ${boundMs / 1000} s for every App to converge`);
  const remaining = await waitConverged(rest, apps, boundMs, say, signal);
  const ms = Date.now() - t0;
  say(
    remaining.size === 0 ? `all Apps converged ${(ms / 1000).toFixed(1)} s after the last edit` : `${remaining.size} Apps NOT converged after ${ms / 1000} s`,
  );
  return { ms, remaining, resumed: paused.length };
}
