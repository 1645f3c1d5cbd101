/** `ebb rollout status`: follows an App and its pods through two watches until the rollout ends. */
import type { App } from '../../api/app.ts';
import { appRef } from '../../api/group.ts';
import { Label } from '../../api/keys.ts';
import { AbortedError } from '../../common/wait.ts';
import { core } from '../../kube/paths.ts';
import type { KubeRest } from '../../kube/rest.ts';
import type { Pod } from '../../kube/types.ts';
import { listWatch } from '../../kube/watch.ts';
import { summarizePods, viewRollout, type RolloutView } from './view.ts';
import { printable } from '../printable.ts';

export interface FollowOptions {
  rest: KubeRest;
  namespace: string;
  name: string;
  signal: AbortSignal;
  /** Called with every view that differs from the previous one, the final one included. */
  onView(view: RolloutView): void;
}

/** How a follow ended: a final view, the App gone, or the signal (a timeout, Ctrl-C). */
export type FollowResult = { kind: 'final'; view: RolloutView } | { kind: 'deleted' } | { kind: 'aborted' };

/**
 * Lists and watches the App (by name) and its pods (by the App label) and renders after every change. Resolves
 * at the first final view, when the App is deleted, or when `signal` aborts; each watch re-lists and retries
 * on its own after a failure, as the watcher's do.
 */
export async function followRollout(opts: FollowOptions): Promise<FollowResult> {
  const stop = new AbortController();
  const signal = AbortSignal.any([opts.signal, stop.signal]);
  let app: App | undefined;
  let appListed = false;
  let podsListed = false;
  const pods = new Map<string, Pod>();
  let last = '';
  let result: FollowResult | undefined;

  const render = (): void => {
    if (result || !appListed || !podsListed) return;
    if (!app) {
      result = { kind: 'deleted' };
      stop.abort();
      return;
    }
    const view = viewRollout(app, summarizePods(pods.values()));
    const key = `${view.state}\n${view.line}`;
    if (key !== last) {
      last = key;
      opts.onView(view);
    }
    if (view.state !== 'progressing') {
      result = { kind: 'final', view };
      stop.abort();
    }
  };

  const appLoop = listWatch<App>(
    { rest: opts.rest, ref: appRef(opts.namespace), fieldSelector: `metadata.name=${opts.name}`, signal },
    {
      onList: (items) => {
        app = items[0];
        appListed = true;
        render();
      },
      onEvent: (ev) => {
        app = ev.type === 'DELETED' ? undefined : ev.object;
        render();
      },
    },
  );
  const podLoop = listWatch<Pod>(
    { rest: opts.rest, ref: core('pods', opts.namespace), labelSelector: `${Label.app}=${opts.name}`, signal },
    {
      onList: (items) => {
        pods.clear();
        for (const p of items) pods.set(p.metadata.name ?? '', p);
        podsListed = true;
        render();
      },
      onEvent: (ev) => {
        const podName = ev.object.metadata.name ?? '';
        if (ev.type === 'DELETED') pods.delete(podName);
        else pods.set(podName, ev.object);
        render();
      },
    },
  );
  const ended = async (p: Promise<void>): Promise<void> => {
    try {
      await p;
    } catch (err) {
      if (!(err instanceof AbortedError)) throw err;
    }
  };
  await Promise.all([ended(appLoop), ended(podLoop)]);
  return result ?? { kind: 'aborted' };
}

/** Writes views: one line redrawn in place on a terminal, one plain line per change otherwise. */
export class StatusPrinter {
  private drawn = false;
  private readonly out: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  private readonly tty: boolean;
  constructor(out: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }, tty = out.isTTY === true) {
    this.out = out;
    this.tty = tty;
  }

  /** Cluster text in `view` is printed without its control characters (printable.ts). */
  show(view: RolloutView): void {
    const text = printable(view.line);
    if (!this.tty) {
      this.out.write(`${text}\n`);
      return;
    }
    const width = Math.max(20, (this.out.columns ?? 80) - 1);
    const line = text.length > width ? `${text.slice(0, width - 1)}…` : text;
    this.out.write(`\r\x1b[2K${line}`);
    this.drawn = true;
  }

  /** Ends the in-place line (on a terminal) and prints `text` on its own line. */
  finish(text: string): void {
    if (this.drawn) this.out.write('\n');
    this.drawn = false;
    this.out.write(`${printable(text)}\n`);
  }
}
