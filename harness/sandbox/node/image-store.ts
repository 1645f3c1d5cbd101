import { createHash } from 'node:crypto';
import { AbortedError, sleep } from '../../../src/common/wait.ts';
import { parseImageReference, formatImageReference, repository, type ImageReference } from '../../../src/api/image-ref.ts';

/** An image present on a simulated node, shaped like CRI's `Image` message. */
export interface StoredImage {
  /** Image ID as a runtime reports it: `sha256:<config digest>`. */
  id: string;
  repoTags: string[];
  /** `repo@sha256:<manifest digest>`; the kubelet reports this as a container's imageID. */
  repoDigests: string[];
  size: number;
  pulledAt: Date;
}

/**
 * The simulated registry every node pulls from. Digests are derived from the reference, so the same
 * reference always resolves to the same image; `retag` points a tag at another image's content (a tag that
 * moved to the same digest), and `failPulls` makes pulls of an image fail (fault injection).
 */
export class SimRegistry {
  private readonly aliases = new Map<string, string>();
  private readonly failing = new Map<string, string>();

  retag(from: string, to: string): void {
    this.aliases.set(canonical(from), canonical(to));
  }

  failPulls(image: string, message = 'simulated registry error: manifest unknown'): void {
    this.failing.set(canonical(image), message);
  }

  clearFailure(image: string): void {
    this.failing.delete(canonical(image));
  }

  /** Resolves a reference to its content digests, or throws PullError. */
  resolve(image: string): { ref: ImageReference; manifestDigest: string; configDigest: string; size: number } {
    const parsed = parseImageReference(image);
    if (!parsed.ok) throw new PullError('InvalidImageName', parsed.reason);
    const key = formatImageReference(parsed.ref);
    const failure = this.failing.get(key);
    if (failure) throw new PullError('ErrImagePull', failure);
    if (isUnresolvableHost(parsed.ref.domain)) {
      throw new PullError('ErrImagePull', `failed to do request: dial tcp: lookup ${parsed.ref.domain.replace(/:\d+$/, '')}: no such host`);
    }
    const content = parsed.ref.digest ?? this.aliases.get(key) ?? key;
    const manifestDigest = parsed.ref.digest ?? `sha256:${sha256(`manifest:${content}`)}`;
    const configDigest = `sha256:${sha256(`config:${manifestDigest}`)}`;
    const size = 1_000_000 + (parseInt(manifestDigest.slice(7, 13), 16) % 50_000_000);
    return { ref: parsed.ref, manifestDigest, configDigest, size };
  }
}

/**
 * Registry hosts in the reserved `.invalid` TLD (RFC 2606) never resolve, as on a real network: every pull from
 * them fails. Tests in another process than the sandbox use this to provoke ErrImagePull without a fault hook.
 */
export function isUnresolvableHost(domain: string): boolean {
  return /\.invalid(:\d+)?$/.test(domain);
}

export class PullError extends Error {
  override readonly name = 'PullError';
  readonly reason: 'ErrImagePull' | 'InvalidImageName';
  constructor(reason: 'ErrImagePull' | 'InvalidImageName', message: string) {
    super(message);
    this.reason = reason;
  }
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

function canonical(image: string): string {
  const parsed = parseImageReference(image);
  if (!parsed.ok) throw new Error(parsed.reason);
  return formatImageReference(parsed.ref);
}

export interface ImageStoreOptions {
  registry: SimRegistry;
  /** Simulated time to pull an image that is not present. */
  pullMs: () => number;
  now?: () => Date;
}

/**
 * One node's image store. The simulated kubelet and the node's CRI ImageService share it, so an image
 * pre-pulled through CRI is present when the kubelet starts a container. Concurrent pulls of the same
 * image share one pull, as in containerd.
 */
export class ImageStore {
  private readonly images = new Map<string, StoredImage>();
  private readonly inflight = new Map<string, Promise<StoredImage>>();
  private readonly opts: ImageStoreOptions;
  private readonly lifetime = new AbortController();
  /** Pulls that transferred content from the registry (the image was not present). */
  pullCount = 0;
  /** Every pull request, including those served from content already present. */
  pullRequests = 0;

  constructor(opts: ImageStoreOptions) {
    this.opts = opts;
  }

  /** Finds an image by reference (tag or digest) or by image ID. */
  status(image: string): StoredImage | undefined {
    const byId = this.images.get(image);
    if (byId) return byId;
    const parsed = parseImageReference(image);
    if (!parsed.ok) return undefined;
    const key = formatImageReference(parsed.ref);
    for (const img of this.images.values()) {
      if (img.repoTags.includes(key)) return img;
      if (parsed.ref.digest && img.repoDigests.includes(`${repository(parsed.ref)}@${parsed.ref.digest}`)) return img;
    }
    return undefined;
  }

  list(): StoredImage[] {
    return [...this.images.values()];
  }

  /**
   * Pulls an image (always contacting the registry, as CRI PullImage does) and returns what is stored.
   * Concurrent callers share one pull; a caller's signal only stops that caller's wait, never the shared
   * pull (which ends early only when the store is closed).
   */
  pull(image: string, signal?: AbortSignal): Promise<StoredImage> {
    const resolved = this.opts.registry.resolve(image);
    const key = formatImageReference(resolved.ref);
    this.pullRequests++;
    let shared = this.inflight.get(key);
    if (!shared) {
      const present = this.images.get(resolved.configDigest);
      const delay = present ? 0 : this.opts.pullMs();
      shared = this.doPull(key, resolved, delay, this.lifetime.signal).finally(() => this.inflight.delete(key));
      this.inflight.set(key, shared);
    }
    return signal ? raceAbort(shared, signal) : shared;
  }

  /** Aborts pulls in flight (the node is going away). */
  close(): void {
    this.lifetime.abort();
  }

  /** Ensures an image is present: returns at once when it is, pulls when it is not (kubelet IfNotPresent). */
  async ensure(image: string, signal?: AbortSignal): Promise<{ image: StoredImage; pulled: boolean }> {
    const present = this.status(image);
    if (present) return { image: present, pulled: false };
    return { image: await this.pull(image, signal), pulled: true };
  }

  remove(image: string): boolean {
    const found = this.status(image);
    if (!found) return false;
    return this.images.delete(found.id);
  }

  private async doPull(key: string, resolved: ReturnType<SimRegistry['resolve']>, delayMs: number, signal?: AbortSignal): Promise<StoredImage> {
    if (delayMs > 0) {
      await sleep(delayMs, signal);
      this.pullCount++;
    }
    if (signal?.aborted) throw new AbortedError();
    const digestRef = `${repository(resolved.ref)}@${resolved.manifestDigest}`;
    const existing = this.images.get(resolved.configDigest);
    const tagged = resolved.ref.tag ? [key.replace(/@.*$/, '')] : [];
    const img: StoredImage = {
      id: resolved.configDigest,
      repoTags: [...new Set([...(existing?.repoTags ?? []), ...tagged])],
      repoDigests: [...new Set([...(existing?.repoDigests ?? []), digestRef])],
      size: resolved.size,
      pulledAt: this.opts.now?.() ?? new Date(),
    };
    // A tag moves to the new image: drop it from any other image that carried it.
    for (const other of this.images.values()) {
      if (other.id !== img.id) other.repoTags = other.repoTags.filter((t) => !tagged.includes(t));
    }
    this.images.set(img.id, img);
    return img;
  }
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new AbortedError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new AbortedError());
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
