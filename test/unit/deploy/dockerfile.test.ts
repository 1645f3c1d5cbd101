/**
 * The Dockerfile, read as text: every stage starts from a base pinned by digest; packages come from the
 * lockfile with install scripts off; the `daemon` target carries only the packages and compiled folders that
 * `ebb daemon` loads (its import closure, computed from src/), so neither the Redis and BullMQ clients, Bull
 * Board nor client-node's kubeconfig plugins are in the image that runs on every node; both images run the CLI.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './kustomize.ts';

const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
/** Instructions with their continuation lines joined, comments dropped. */
const instructions = text
  .replace(/\\\n\s*/g, ' ')
  .split('\n')
  .filter((l) => l.trim() !== '' && !l.startsWith('#'));
const args: Record<string, string> = Object.fromEntries(
  instructions.map((l) => /^ARG (\w+)=(\S+)$/.exec(l)).flatMap((m) => (m ? [[m[1] ?? '', m[2] ?? '']] : [])),
);
/** Each stage: its name and its instructions after FROM. */
const stages: { name: string; from: string; lines: string[] }[] = [];
for (const l of instructions) {
  const from = /^FROM (\S+)(?: AS (\S+))?$/i.exec(l);
  if (from) stages.push({ from: (from[1] ?? '').replace(/^\$\{(\w+)\}$/, (_, a: string) => args[a] ?? ''), name: from[2] ?? '', lines: [] });
  else stages.at(-1)?.lines.push(l);
}
const stage = (name: string): { lines: string[] } => stages.find((s) => s.name === name) ?? { lines: [] };

/** The npm packages and src/ folders the modules reachable from `entries` import (dynamic imports included). */
function importClosure(entries: string[], skipDynamicIn: Set<string>): { packages: Set<string>; folders: Set<string> } {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(join(ROOT, file), 'utf8');
    const specs = [...source.matchAll(/^(?:import|export) (?!type )[^;]*? from '([^']+)'/gms)].map((m) => m[1] ?? '');
    if (!skipDynamicIn.has(file)) specs.push(...[...source.matchAll(/import\('([^']+)'\)/g)].map((m) => m[1] ?? ''));
    for (const spec of specs) {
      if (spec.startsWith('.')) visit(normalize(join(dirname(file), spec)));
      else if (!spec.startsWith('node:'))
        packages.add(
          spec
            .split('/')
            .slice(0, spec.startsWith('@') ? 2 : 1)
            .join('/'),
        );
    }
  };
  entries.forEach(visit);
  return { packages, folders: new Set([...seen].map((f) => relative('src', dirname(f)).split('/')[0] ?? '')) };
}

/** `ebb daemon`: the CLI's static imports, and the modules `daemonCommand` imports when it runs. */
function daemonClosure(): { packages: Set<string>; folders: Set<string> } {
  const processes = readFileSync(join(ROOT, 'src/cli/processes.ts'), 'utf8');
  const body = processes.slice(processes.indexOf('export async function daemonCommand'));
  const own = [...body.slice(0, body.indexOf('\n}\n')).matchAll(/import\('([^']+)'\)/g)].map((m) => normalize(join('src/cli', m[1] ?? '')));
  // The CLI's dispatch imports each other command only when it runs: only the daemon's modules are followed.
  return importClosure(['src/cli/main.ts', ...own], new Set(['src/cli/commands.ts', 'src/cli/processes.ts']));
}

describe('the Dockerfile', () => {
  it('pins every base image by digest', () => {
    expect(stages.length).toBeGreaterThan(2);
    for (const s of stages) {
      const isStage = stages.some((other) => other.name === s.from);
      if (!isStage) expect(s.from, `stage ${s.name}`).toMatch(/^[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}$/);
    }
  });

  it('installs from the lockfile with install scripts off', () => {
    const npm = instructions.filter((l) => /\bnpm (install|ci|prune|rebuild)\b/.test(l));
    expect(npm.length).toBeGreaterThan(0);
    for (const l of npm) for (const command of l.split('&&').filter((c) => /npm (install|ci|prune)/.test(c))) expect(command).toContain('--ignore-scripts');
    expect(instructions.some((l) => /COPY package\.json package-lock\.json/.test(l))).toBe(true);
    expect(npm.filter((l) => /npm install (?!--no-save)/.test(l))).toEqual([]);
  });

  it('gives the daemon target only the packages and code that `ebb daemon` loads', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const deleted = [
      ...stage('daemon-deps')
        .lines.join(' ')
        .matchAll(/dependencies\.(\S+)/g),
    ].map((m) => m[1] ?? '');
    const kept = Object.keys(pkg.dependencies).filter((d) => !deleted.includes(d));
    const closure = daemonClosure();
    // client-node is imported only for a kubeconfig user with an exec or auth-provider plugin; in its pod the
    // daemon authenticates with its service-account token and never loads it.
    const needed = [...closure.packages].filter((p) => p !== '@kubernetes/client-node');
    expect(closure.packages).toContain('@kubernetes/client-node');
    expect(kept.sort()).toEqual(needed.sort());
    for (const p of ['bullmq', 'ioredis', '@bull-board/api', '@kubernetes/client-node']) expect(deleted).toContain(p);
    const copied = stage('daemon')
      .lines.map((l) => /^COPY --from=build \/src\/dist\/(\w+) /.exec(l)?.[1])
      .filter((f): f is string => f !== undefined);
    expect(copied.sort()).toEqual([...closure.folders].sort());
    expect(stage('daemon').lines).toContain('COPY --from=daemon-deps /src/node_modules ./node_modules');
  });

  it('runs the CLI as a non-root user in both images; the last stage is the default image', () => {
    const finals = stages.filter((s) => s.lines.some((l) => l.startsWith('ENTRYPOINT ')));
    expect(finals.map((s) => s.name)).toEqual(['daemon', 'ebb']);
    expect(stages.at(-1)?.name).toBe('ebb');
    for (const s of finals) {
      expect(s.lines.filter((l) => l.startsWith('ENTRYPOINT ') || l.startsWith('USER '))).toEqual([
        'USER 1000',
        'ENTRYPOINT ["node", "/app/dist/cli/main.js"]',
      ]);
    }
  });
});
