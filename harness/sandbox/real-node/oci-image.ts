import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
const OCI_LAYER_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';

/** A registry credential for HTTP basic auth. */
export interface BasicAuth {
  username: string;
  password: string;
}

/** A file of an image layer: its bytes and mode (a plain string is a file of mode 0644). */
export interface LayerFile {
  content: Buffer;
  mode: number;
}

export type LayerFiles = Record<string, string | LayerFile>;

/** The runtime settings of an image (the OCI config's `config`); none by default. */
export interface ImageSettings {
  entrypoint?: string[];
  exposedPorts?: number[];
}

export interface Blob {
  digest: string;
  bytes: Buffer;
}

/** A single-layer OCI image, byte for byte the same for the same input. */
export interface OciImage {
  config: Blob;
  layer: Blob;
  manifest: Blob;
  /** The image ID a runtime reports: the config digest. */
  id: string;
}

/**
 * Builds a tiny image whose one layer is a gzip'd tar holding `files` (name → content), for the
 * platform this process runs on. No timestamps: the same files always give the same digests.
 */
export function buildImage(files: LayerFiles, settings: ImageSettings = {}): OciImage {
  const tar = tarOf(files);
  const layer = blob(gzipSync(tar, { level: 9 }));
  const config = blob(
    Buffer.from(
      JSON.stringify({
        architecture: goArch(),
        os: 'linux',
        config: imageConfig(settings),
        rootfs: { type: 'layers', diff_ids: [sha256(tar)] },
      }),
    ),
  );
  const manifest = blob(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: { mediaType: OCI_CONFIG, digest: config.digest, size: config.bytes.length },
        layers: [{ mediaType: OCI_LAYER_GZIP, digest: layer.digest, size: layer.bytes.length }],
      }),
    ),
  );
  return { config, layer, manifest, id: config.digest };
}

/**
 * Pushes `image` as `repo:tag` through the registry HTTP API: each blob by a monolithic upload (POST to
 * open the upload, PUT with the digest), then the manifest. Returns the manifest digest.
 */
export async function pushImage(
  registryUrl: string,
  target: { repo: string; tag: string },
  image: OciImage,
  opts: { auth?: BasicAuth; signal: AbortSignal },
): Promise<string> {
  const headers: Record<string, string> = opts.auth ? { authorization: basicAuthorization(opts.auth) } : {};
  const base = `${registryUrl}/v2/${target.repo}`;
  for (const b of [image.layer, image.config]) {
    const started = await fetch(`${base}/blobs/uploads/`, { method: 'POST', headers, signal: opts.signal });
    await expectStatus(started, 202, 'blob upload start');
    const location = started.headers.get('location');
    if (!location) throw new Error('registry answered a blob upload without a Location');
    const upload = new URL(location, registryUrl);
    upload.searchParams.set('digest', b.digest);
    const put = await fetch(upload, {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/octet-stream' },
      body: b.bytes,
      signal: opts.signal,
    });
    await expectStatus(put, 201, `blob ${b.digest} upload`);
  }
  const res = await fetch(`${base}/manifests/${target.tag}`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': OCI_MANIFEST },
    body: image.manifest.bytes,
    signal: opts.signal,
  });
  await expectStatus(res, 201, `manifest ${target.repo}:${target.tag}`);
  return res.headers.get('docker-content-digest') ?? image.manifest.digest;
}

function imageConfig(settings: ImageSettings): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  if (settings.entrypoint) config['Entrypoint'] = settings.entrypoint;
  if (settings.exposedPorts) config['ExposedPorts'] = Object.fromEntries(settings.exposedPorts.map((p) => [`${p}/tcp`, {}]));
  return config;
}

function basicAuthorization(auth: BasicAuth): string {
  return `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
}

async function expectStatus(res: Response, status: number, what: string): Promise<void> {
  const body = await res.text();
  if (res.status !== status) throw new Error(`${what}: registry answered ${res.status} ${body.slice(0, 200)}`);
}

function blob(bytes: Buffer): Blob {
  return { digest: sha256(bytes), bytes };
}

function sha256(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** The platform architecture as OCI spells it (Go's GOARCH names). */
function goArch(): string {
  const names: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };
  return names[process.arch] ?? process.arch;
}

const BLOCK = 512;

/** A ustar archive of regular files (mode 0644 unless given, owner 0:0, mtime 0), names sorted. */
function tarOf(files: LayerFiles): Buffer {
  const parts: Buffer[] = [];
  for (const name of Object.keys(files).sort()) {
    const file = files[name] ?? '';
    const { content, mode } = typeof file === 'string' ? { content: Buffer.from(file), mode: 0o644 } : file;
    parts.push(tarHeader(name, content.length, mode), content, Buffer.alloc((BLOCK - (content.length % BLOCK)) % BLOCK));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

function tarHeader(name: string, size: number, mode: number): Buffer {
  if (Buffer.byteLength(name) > 100) throw new Error(`tar entry name too long: ${name}`);
  const h = Buffer.alloc(BLOCK);
  const field = (offset: number, length: number, value: string): void => void h.write(value, offset, length, 'utf8');
  const octal = (offset: number, length: number, value: number): void => field(offset, length, `${value.toString(8).padStart(length - 1, '0')}\0`);
  field(0, 100, name);
  octal(100, 8, mode);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, size);
  octal(136, 12, 0);
  field(148, 8, ' '.repeat(8));
  field(156, 1, '0');
  field(257, 6, 'ustar\0');
  field(263, 2, '00');
  field(265, 32, 'root');
  field(297, 32, 'root');
  let sum = 0;
  for (const byte of h) sum += byte;
  field(148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return h;
}
