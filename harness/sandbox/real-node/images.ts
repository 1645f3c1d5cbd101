/**
 * The real nodes' images, built on this machine (nothing is fetched from outside): small static Go programs
 * (images/) packed as single-layer OCI images and pushed to the sandbox registry. Binaries and images are
 * cached by content under the ebb cache dir, so only the first sandbox on a machine compiles them.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildImage, pushImage, type OciImage } from './oci-image.ts';

const run = promisify(execFile);

const SOURCE_DIR = join(import.meta.dirname, 'images');

/** An image the sandbox serves: a program of images/, linked with `version`, under `repo:tag`. */
export interface ImageSpec {
  repo: string;
  tag: string;
  program: 'pause' | 'app';
  version: string;
}

/** The pause image (containerd's `sandbox_image`) and the HTTP server `ebb/app` at v1, v2 and v3. */
export const SANDBOX_IMAGES: readonly ImageSpec[] = [
  { repo: 'ebb/pause', tag: '1.0', program: 'pause', version: '1.0' },
  ...['v1', 'v2', 'v3'].map((v): ImageSpec => ({ repo: 'ebb/app', tag: v, program: 'app', version: v })),
];

/** References of the pushed images, by `repo:tag` (e.g. `ebb/app:v2` → `127.0.0.1:5000/ebb/app:v2`). */
export type ImageRefs = ReadonlyMap<string, string>;

export const imageRef = (registryHost: string, spec: Pick<ImageSpec, 'repo' | 'tag'>): string => `${registryHost}/${spec.repo}:${spec.tag}`;

export function cacheDir(): string {
  return process.env['EBB_CACHE_DIR'] ?? join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'ebb');
}

async function sourceHash(program: string, version: string): Promise<string> {
  const hash = createHash('sha256');
  const { stdout } = await run('go', ['version']);
  hash
    .update(stdout)
    .update(version)
    .update(await readFile(join(SOURCE_DIR, 'go.mod')));
  for (const f of (await readdir(join(SOURCE_DIR, program))).sort()) hash.update(f).update(await readFile(join(SOURCE_DIR, program, f)));
  return hash.digest('hex').slice(0, 16);
}

const imageDir = async (spec: ImageSpec): Promise<string> => join(cacheDir(), 'images', `${spec.program}-${await sourceHash(spec.program, spec.version)}`);

/** The program binary of `spec` (go build, CGO off, static), built once into the cache. */
export async function programBinary(spec: ImageSpec, signal?: AbortSignal): Promise<string> {
  const dir = await imageDir(spec);
  const binary = join(dir, spec.program);
  if (
    await readFile(binary).then(
      () => true,
      () => false,
    )
  )
    return binary;
  await mkdir(dir, { recursive: true });
  const env = { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '', CGO_ENABLED: '0' };
  const ldflags = `-s -w -X main.version=${spec.version}`;
  await run('go', ['build', '-trimpath', '-ldflags', ldflags, '-o', `${binary}.tmp`, `./${spec.program}`], { cwd: SOURCE_DIR, env, signal });
  await rename(`${binary}.tmp`, binary);
  return binary;
}

/** The image of `spec` with extra files (e.g. a marker that makes its layer unique), not cached. */
export async function buildProgramImage(spec: ImageSpec, extra: Record<string, string> = {}, signal?: AbortSignal): Promise<OciImage> {
  const content = await readFile(await programBinary(spec, signal));
  return buildImage(
    { [spec.program]: { content, mode: 0o755 }, ...extra },
    { entrypoint: [`/${spec.program}`], ...(spec.program === 'app' ? { exposedPorts: [8080] } : {}) },
  );
}

/** The image of `spec`, from the cache or built and cached. */
export async function buildSandboxImage(spec: ImageSpec, signal?: AbortSignal): Promise<OciImage> {
  const dir = await imageDir(spec);
  const files = ['layer', 'config', 'manifest'].map((f) => join(dir, f));
  const [layer, config, manifest] = await Promise.all(files.map((f) => readFile(f).catch(() => undefined)));
  if (layer && config && manifest) {
    const blob = (bytes: Buffer): { digest: string; bytes: Buffer } => ({ digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`, bytes });
    const c = blob(config);
    return { layer: blob(layer), config: c, manifest: blob(manifest), id: c.digest };
  }
  const image = await buildProgramImage(spec, {}, signal);
  for (const [i, bytes] of [image.layer.bytes, image.config.bytes, image.manifest.bytes].entries()) {
    await writeFile(`${files[i]}.tmp`, bytes);
    await rename(`${files[i]}.tmp`, files[i] ?? '');
  }
  return image;
}

/** Builds (or reads from the cache) every sandbox image and pushes it to the registry at `registryUrl`. */
export async function pushSandboxImages(registryHost: string, signal?: AbortSignal): Promise<ImageRefs> {
  const refs = new Map<string, string>();
  const sig = signal ?? new AbortController().signal;
  for (const spec of SANDBOX_IMAGES) {
    const image = await buildSandboxImage(spec, sig);
    await pushImage(`http://${registryHost}`, { repo: spec.repo, tag: spec.tag }, image, { signal: sig });
    refs.set(`${spec.repo}:${spec.tag}`, imageRef(registryHost, spec));
  }
  return refs;
}
