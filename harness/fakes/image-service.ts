import { createHash } from 'node:crypto';
import { CriError, type CriErrorCode } from '../../src/cri/errors.ts';
import type {
  AuthConfig,
  CallOptions,
  CriImage,
  ImageFsUsage,
  ImageService,
  ListImagesOptions,
  PullOptions,
  RuntimeVersion,
} from '../../src/cri/image-service.ts';

export type ImageServiceCall = keyof ImageService;

interface RegistryImage {
  id: string;
  size: number;
  /** When set, a pull must carry this username and password. */
  auth?: { username: string; password: string };
}

/** A failure planned for the nth call (1-based) of a method. */
interface PlannedFailure {
  method: ImageServiceCall;
  nth: number;
  error: CriError;
}

/**
 * In-memory ImageService for unit tests of code that depends on the CRI client. It counts calls per method,
 * can fail the nth call of a method with a chosen CriError, and behaves like containerd otherwise: a pull
 * always "asks the registry" (and is counted as such), a missing image is `ImageNotFound`, a pull without
 * the credential an image needs is `AuthFailed`, an aborted signal is `Aborted`. References are not
 * normalised: `nginx:1.27` and `docker.io/library/nginx:1.27` are different images here.
 */
export class FakeImageService implements ImageService {
  /** Calls per method, failed ones included. */
  readonly calls: Record<ImageServiceCall, number> = { version: 0, imageStatus: 0, pullImage: 0, listImages: 0, imageFsInfo: 0 };
  /** Every pull, in order, with the credential it carried. */
  readonly pulls: { image: string; auth: AuthConfig | undefined }[] = [];
  /** Delay of each pull, in ms; a pull outliving its `timeoutMs` fails with `DeadlineExceeded`. */
  pullDelayMs = 0;
  private readonly registry = new Map<string, RegistryImage>();
  private readonly present = new Map<string, CriImage>();
  private readonly failures: PlannedFailure[] = [];

  /** Makes `ref` pullable; the image ID derives from `ref` unless given. */
  addRegistryImage(ref: string, opts: { id?: string; size?: number; auth?: { username: string; password: string } } = {}): void {
    const id = opts.id ?? `sha256:${createHash('sha256').update(ref).digest('hex')}`;
    this.registry.set(ref, { id, size: opts.size ?? 1024, ...(opts.auth ? { auth: opts.auth } : {}) });
  }

  /** Makes the runtime hold `ref` already, as if pulled before. */
  addPresentImage(ref: string, opts: { id?: string; size?: number } = {}): CriImage {
    this.addRegistryImage(ref, opts);
    const reg = this.registry.get(ref)!;
    return this.store(ref, reg);
  }

  /** Fails the `nth` call (1-based, counted from the fake's creation) of `method` with `error`. */
  failCall(method: ImageServiceCall, nth: number, error: CriError | CriErrorCode): void {
    const err = typeof error === 'string' ? new CriError(error, method, `fake ${method}: planned ${error}`) : error;
    this.failures.push({ method, nth, error: err });
  }

  version(opts: CallOptions): Promise<RuntimeVersion> {
    return this.run('version', opts, () => ({ version: '0.1.0', runtimeName: 'fake', runtimeVersion: '0.0.0', runtimeApiVersion: 'v1' }));
  }

  imageStatus(image: string, opts: CallOptions): Promise<CriImage | undefined> {
    return this.run('imageStatus', opts, () => this.lookup(image));
  }

  listImages(opts: ListImagesOptions): Promise<CriImage[]> {
    return this.run('listImages', opts, () => {
      if (opts.image === undefined) return this.images();
      const found = this.lookup(opts.image);
      return found ? [found] : [];
    });
  }

  imageFsInfo(opts: CallOptions): Promise<ImageFsUsage[]> {
    return this.run('imageFsInfo', opts, () => {
      const images = this.images();
      const usedBytes = images.reduce((sum, i) => sum + i.size, 0);
      return [{ mountpoint: '/fake/images', timestampMs: Date.now(), usedBytes, inodesUsed: images.length }];
    });
  }

  async pullImage(image: string, opts: PullOptions): Promise<string> {
    return this.run('pullImage', opts, async () => {
      this.pulls.push({ image, auth: opts.auth });
      await this.delay(opts);
      const reg = this.registry.get(image);
      if (!reg) throw new CriError('ImageNotFound', 'PullImage', `fake PullImage: ${image}: not found`);
      if (reg.auth && (opts.auth?.username !== reg.auth.username || opts.auth.password !== reg.auth.password)) {
        throw new CriError('AuthFailed', 'PullImage', `fake PullImage: ${image}: 401 Unauthorized`);
      }
      return this.store(image, reg).id;
    });
  }

  private async run<T>(method: ImageServiceCall, opts: CallOptions, fn: () => T | Promise<T>): Promise<T> {
    const n = ++this.calls[method];
    if (opts.signal.aborted) throw new CriError('Aborted', method, `fake ${method}: aborted`);
    const planned = this.failures.find((f) => f.method === method && f.nth === n);
    if (planned) throw planned.error;
    return fn();
  }

  private delay(opts: CallOptions): Promise<void> {
    if (this.pullDelayMs <= 0) return Promise.resolve();
    const timedOut = opts.timeoutMs !== undefined && opts.timeoutMs < this.pullDelayMs;
    const ms = timedOut ? (opts.timeoutMs ?? 0) : this.pullDelayMs;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(new CriError('Aborted', 'PullImage', 'fake PullImage: aborted'));
      };
      const timer = setTimeout(() => {
        opts.signal.removeEventListener('abort', onAbort);
        if (timedOut) reject(new CriError('DeadlineExceeded', 'PullImage', 'fake PullImage: deadline exceeded'));
        else resolve();
      }, ms);
      opts.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The images held, once each (several tags may name one image). */
  private images(): CriImage[] {
    return [...new Set(this.present.values())];
  }

  private lookup(image: string): CriImage | undefined {
    return this.present.get(image) ?? this.images().find((i) => i.id === image);
  }

  private store(ref: string, reg: RegistryImage): CriImage {
    const known = this.images().find((i) => i.id === reg.id);
    const img: CriImage = known ?? { id: reg.id, repoTags: [], repoDigests: [], size: reg.size, pinned: false };
    if (!img.repoTags.includes(ref)) img.repoTags.push(ref);
    this.present.set(ref, img);
    return img;
  }
}
