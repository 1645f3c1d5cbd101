/**
 * In-memory ImageLists with the part of server-side apply pre-warming relies on: each field manager owns the
 * entries and labels it applied; an apply replaces the manager's set, and an entry or label stays while any
 * manager still owns it. A `metadata.uid` in the body is a precondition (Conflict when the ImageList is gone).
 * Tests play the node daemon with `setPhase`.
 */
import type { ImageList, ImagePhase } from '../../src/api/image-list.ts';
import type { ClusterStored } from '../../src/kube/types.ts';
import { API_VERSION, IMAGE_LIST_KIND } from '../../src/api/group.ts';
import { KubeError } from '../../src/kube/errors.ts';
import { conflict, parseSelector } from './store.ts';
import type { ImageListStore } from '../../src/workers/app/model/client.ts';

interface Stored {
  uid: string;
  resourceVersion: number;
  /** image → managers that list it */
  images: Map<string, Set<string>>;
  /** label key → value and the managers that set it */
  labels: Map<string, { value: string; managers: Set<string> }>;
  status: Map<string, { phase: ImagePhase; message?: string }>;
}

interface ApplyBody {
  metadata?: { uid?: string; labels?: Record<string, string> };
  spec?: { images?: { image: string }[] };
}

export type Guard = <T>(op: string, fn: () => T) => Promise<T>;

function release<V extends { managers: Set<string> } | Set<string>>(map: Map<string, V>, manager: string, keep: (key: string) => boolean): void {
  for (const [key, v] of [...map]) {
    if (keep(key)) continue;
    const managers = v instanceof Set ? v : v.managers;
    managers.delete(manager);
    if (managers.size === 0) map.delete(key);
  }
}

/** A label another manager set to a different value is a conflict (the apply is not forced). */
function checkLabelConflicts(stored: Stored, labels: Record<string, string>, manager: string): void {
  for (const [key, value] of Object.entries(labels)) {
    const owners = stored.labels.get(key);
    if (owners && owners.value !== value && [...owners.managers].some((m) => m !== manager))
      throw new KubeError('Conflict', 409, `Apply failed with 1 conflict: .metadata.labels.${key}`, 'Conflict');
  }
}

export class FakeImageLists {
  private readonly lists = new Map<string, Stored>();
  private seq = 0;

  /** The stored ImageList an apply with `uid` (a precondition when set) writes to, created when absent. */
  private target(name: string, uid: string | undefined): Stored {
    const stored = this.lists.get(name);
    if (uid !== undefined && stored?.uid !== uid) {
      if (!stored) throw conflict(`ImageList ${name} (uid precondition: no such object)`);
      throw new KubeError('Invalid', 422, `ImageList ${name}: metadata.uid: field is immutable`, 'Invalid');
    }
    if (stored) return stored;
    const created: Stored = { uid: `il-${++this.seq}`, resourceVersion: 0, images: new Map(), labels: new Map(), status: new Map() };
    this.lists.set(name, created);
    return created;
  }

  apply(name: string, body: unknown, manager: string): void {
    const b = (body ?? {}) as ApplyBody;
    const stored = this.target(name, b.metadata?.uid);
    const images = new Set((b.spec?.images ?? []).map((e) => e.image));
    const labels = b.metadata?.labels ?? {};
    checkLabelConflicts(stored, labels, manager);
    release(stored.images, manager, (image) => images.has(image));
    release(stored.labels, manager, (key) => key in labels);
    for (const image of images) stored.images.set(image, (stored.images.get(image) ?? new Set()).add(manager));
    for (const [key, value] of Object.entries(labels))
      stored.labels.set(key, { value, managers: new Set([...(stored.labels.get(key)?.managers ?? []), manager]) });
    stored.resourceVersion++;
  }

  /** The ImageList as the apiserver would return it, or undefined. */
  get(name: string): ClusterStored<ImageList> | undefined {
    const s = this.lists.get(name);
    if (!s) return undefined;
    return {
      apiVersion: API_VERSION,
      kind: IMAGE_LIST_KIND,
      metadata: { name, uid: s.uid, resourceVersion: String(s.resourceVersion), labels: Object.fromEntries([...s.labels].map(([k, v]) => [k, v.value])) },
      spec: { images: [...s.images.keys()].map((image) => ({ image })) },
      status: { images: [...s.status].filter(([image]) => s.images.has(image)).map(([image, st]) => ({ image, ...st })) },
    };
  }

  /** The images `name` lists, with the managers of each. */
  owners(name: string): Record<string, string[]> {
    return Object.fromEntries([...(this.lists.get(name)?.images ?? [])].map(([image, m]) => [image, [...m].sort()]));
  }

  names(): string[] {
    return [...this.lists.keys()].sort();
  }

  /** The node daemon reports an image's phase. */
  setPhase(name: string, image: string, phase: ImagePhase, message?: string): void {
    const s = this.lists.get(name);
    if (!s) return;
    s.status.set(image, { phase, ...(message !== undefined ? { message } : {}) });
    s.resourceVersion++;
  }

  remove(name: string): void {
    this.lists.delete(name);
  }

  store(guard: Guard): ImageListStore {
    return {
      list: (selector) =>
        guard('imageLists.list', () => {
          const matches = parseSelector(selector);
          return this.names().flatMap((n) => {
            const l = this.get(n);
            return l && matches(l.metadata.labels ?? {}) ? [l] : [];
          });
        }),
      apply: (name, body, manager) => guard('imageLists.apply', () => this.apply(name, body, manager)),
    };
  }
}
