/**
 * What the manifests in deploy/ run exists in the product: every container of the ebb image runs the image's
 * ENTRYPOINT (the CLI) with a command of `src/cli/commands.ts`, passes only flags that command accepts, and sets
 * only environment variables that the process's settings table declares; the watcher and the worker bound V8's
 * heap inside their memory limit. The manifests are assembled from the kustomizations as `kubectl kustomize`
 * would (test/unit/deploy/kustomize.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../src/cli/commands.ts';
import { CLI_SETTINGS } from '../../../src/cli/config.ts';
import { QUEUE_CLI_SETTINGS } from '../../../src/cli/queue/config.ts';
import { ROLLOUT_CLI_SETTINGS } from '../../../src/cli/rollout/config.ts';
import { isRecord } from '../../../src/common/guards.ts';
import type { Entries } from '../../../src/common/settings.ts';
import { DAEMON_SETTINGS } from '../../../src/daemon/config.ts';
import { WATCHER_SETTINGS } from '../../../src/watcher/config.ts';
import { WORKER_SETTINGS } from '../../../src/workers/config.ts';
import { kustomize, ROOT } from './kustomize.ts';

/** The kustomizations a user applies (README: `kubectl apply --server-side -k deploy/`, then `deploy/keda`). */
const KUSTOMIZATIONS = ['deploy', 'deploy/keda'];
/** The names of ebb's images: the Dockerfile's default target and its `daemon` target (kustomization `images` maps them). */
const EBB_IMAGES = new Set(['ebb', 'ebb-daemon']);

/** The settings tables each command reads its environment with (`run --all` runs the watcher and a worker). */
const SETTINGS_OF: Record<string, readonly Entries[]> = {
  watcher: [WATCHER_SETTINGS.entries],
  worker: [WORKER_SETTINGS.entries],
  daemon: [DAEMON_SETTINGS.entries],
  run: [WATCHER_SETTINGS.entries, WORKER_SETTINGS.entries, CLI_SETTINGS.entries],
  queue: [QUEUE_CLI_SETTINGS.entries],
  rollout: [ROLLOUT_CLI_SETTINGS.entries],
  set: [ROLLOUT_CLI_SETTINGS.entries],
  version: [],
};

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string }[];
  envFrom?: unknown[];
  resources?: { limits?: { memory?: string } };
}

/** The containers (init containers included) anywhere in `node`: any array of objects with an image. */
function containersIn(node: unknown): Container[] {
  if (Array.isArray(node)) return node.flatMap(containersIn);
  if (!isRecord(node)) return [];
  return Object.entries(node).flatMap(([key, value]) => {
    const isContainerList =
      (key === 'containers' || key === 'initContainers') && Array.isArray(value) && value.every((c) => isRecord(c) && typeof c['image'] === 'string');
    return isContainerList ? (value as Container[]) : containersIn(value);
  });
}

/** `registry/path/name:tag@digest` → `name`. */
function imageName(image: string): string {
  return (image.split('@')[0] ?? '').split('/').at(-1)?.split(':')[0] ?? '';
}

/** The Dockerfile's ENTRYPOINT (exec form): what a container runs when it sets no `command`. */
function entrypoint(): string[] {
  const line = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
    .split('\n')
    .findLast((l) => l.startsWith('ENTRYPOINT '));
  return JSON.parse(line?.slice('ENTRYPOINT '.length) ?? '[]') as string[];
}

/** All setting names of some tables. */
function names(tables: readonly Entries[]): Set<string> {
  return new Set(tables.flatMap((entries) => Object.values(entries).map((s) => s.name)));
}

/** Variables the container sets that the command does not read: any EBB_*, and any other name some process reads. */
function envProblems(where: string, c: Container, command: string): string[] {
  if (c.envFrom !== undefined) return [`${where}: uses envFrom: teach manifests.test.ts which variables it sets`];
  const reads = names(SETTINGS_OF[command] ?? []);
  const declared = names(Object.values(SETTINGS_OF).flat());
  return (c.env ?? [])
    .filter(({ name }) => (name.startsWith('EBB_') || declared.has(name)) && !reads.has(name))
    .map(({ name }) => `${where}: sets ${name}, which is not in the settings table of "ebb ${command}"`);
}

/** What is wrong with one container of the ebb image; `commands` collects the CLI command it runs. */
function problemsOf(where: string, c: Container, commands: string[]): string[] {
  const problems: string[] = [];
  const entry = entrypoint();
  if (c.command !== undefined && JSON.stringify(c.command) !== JSON.stringify(entry)) {
    problems.push(`${where}: sets command ${JSON.stringify(c.command)}; the image's ENTRYPOINT ${JSON.stringify(entry)} is the ebb CLI`);
  }
  const [name = '', ...rest] = c.args ?? [];
  const spec = COMMANDS[name];
  if (!spec) return [...problems, `${where}: runs "ebb ${name}", which is not a command of src/cli/commands.ts (${Object.keys(COMMANDS).join(', ')})`];
  commands.push(name);
  const flags = spec.flags ?? [];
  const accepts = flags.length > 0 ? flags.join(', ') : 'no arguments';
  for (const arg of rest.filter((a) => !flags.includes(a.split('=')[0] ?? ''))) {
    problems.push(`${where}: "ebb ${name}" does not accept ${JSON.stringify(arg)} (it accepts ${accepts})`);
  }
  return [...problems, ...envProblems(where, c, name)];
}

/** A memory quantity in MiB (the manifests use Mi and Gi only). */
function mebibytes(quantity: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!m) throw new Error(`memory quantity ${quantity}: teach manifests.test.ts its unit`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
}

/** Processes whose manifest must bound V8's heap: without flags V8 sizes it from the machine or the limit. */
const HEAP_CAPPED = new Set(['watcher', 'worker']);
/** Share of the memory limit the V8 heap may take; the rest is code, buffers and native memory. */
const HEAP_SHARE = 0.6;

/** What is wrong with a container's V8 heap flags: the old space plus three semi-spaces must fit its limit. */
function heapProblems(where: string, c: Container): string[] {
  const options = c.env?.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
  const flag = (name: string): number | undefined => {
    const m = new RegExp(`--${name}=(\\d+)`).exec(options);
    return m ? Number(m[1]) : undefined;
  };
  const oldSpace = flag('max-old-space-size');
  const semiSpace = flag('max-semi-space-size');
  const limit = c.resources?.limits?.memory;
  if (oldSpace === undefined || semiSpace === undefined || limit === undefined) {
    return [`${where}: needs NODE_OPTIONS with --max-old-space-size and --max-semi-space-size, and a memory limit`];
  }
  const heap = oldSpace + 3 * semiSpace;
  const room = HEAP_SHARE * mebibytes(limit);
  return heap <= room ? [] : [`${where}: a V8 heap of up to ${heap} MiB does not fit ${HEAP_SHARE} × its ${limit} limit`];
}

/** Reading and parsing every manifest, synchronously: well under a second quiet, many seconds on a loaded machine. */
const RENDER_TIMEOUT_MS = 60_000;

describe('the manifests in deploy/', { timeout: RENDER_TIMEOUT_MS }, () => {
  it('knows the settings table of every command', () => {
    expect(Object.keys(SETTINGS_OF).sort()).toEqual(Object.keys(COMMANDS).sort());
  });

  it('the image runs the ebb CLI', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(entrypoint().at(-1)).toBe(`/app/${pkg.bin['ebb']}`);
  });

  it('run only commands, flags and settings the CLI has', () => {
    const commands: string[] = [];
    const problems = KUSTOMIZATIONS.flatMap((dir) =>
      kustomize(dir).flatMap((doc) => {
        const owner = `${dir}: ${doc.kind} ${doc.metadata.name}`;
        return containersIn(doc)
          .filter((c) => EBB_IMAGES.has(imageName(c.image)))
          .flatMap((c) => problemsOf(`${owner}, container ${c.name}`, c, commands));
      }),
    );
    expect(problems).toEqual([]);
    expect(new Set(commands)).toEqual(new Set(['watcher', 'worker', 'daemon']));
  });

  it('bound the V8 heap of the watcher and the worker well inside their memory limit', () => {
    const capped = kustomize('deploy')
      .flatMap(containersIn)
      .filter((c) => EBB_IMAGES.has(imageName(c.image)) && HEAP_CAPPED.has(c.args?.[0] ?? ''));
    expect(capped.map((c) => c.args?.[0]).sort()).toEqual(['watcher', 'worker']);
    expect(capped.flatMap((c) => heapProblems(`container ${c.name}`, c))).toEqual([]);
  });
});
