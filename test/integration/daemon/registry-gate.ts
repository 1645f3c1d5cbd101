/**
 * An HTTP proxy in front of a registry that can hold blob downloads: while it is closed, a pull through it
 * has resolved its manifest and waits for its layers, so a test can act mid-pull.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GateRequest {
  method: string;
  path: string;
  /** `held` while waiting; `done` once answered in full; `dropped` when the client went away first. */
  state: 'held' | 'passing' | 'done' | 'dropped';
}

export interface RegistryGate {
  /** `127.0.0.1:<port>`: the registry part of image references pulled through the gate. */
  readonly host: string;
  /** Every request so far, oldest first. */
  requests(): readonly GateRequest[];
  /** Blob downloads wait (until `open()`, or until their client gives up). */
  close(): void;
  /** Lets held downloads and every later request through. */
  open(): void;
  dispose(): Promise<void>;
}

/** Starts a gate on 127.0.0.1 (a loopback registry, so containerd speaks plain HTTP to it), open. */
export async function startRegistryGate(upstream: string): Promise<RegistryGate> {
  const seen: GateRequest[] = [];
  const waiting: (() => void)[] = [];
  let closed = false;

  const forward = (req: IncomingMessage, res: ServerResponse, entry: GateRequest): void => {
    if (entry.state === 'dropped') return;
    entry.state = 'passing';
    const up = request(new URL(req.url ?? '/', upstream), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  };

  const server = createServer((req, res) => {
    const entry: GateRequest = { method: req.method ?? '', path: req.url ?? '', state: 'held' };
    seen.push(entry);
    res.on('close', () => (entry.state = res.writableFinished ? 'done' : 'dropped'));
    if (closed && entry.path.includes('/blobs/')) waiting.push(() => forward(req, res, entry));
    else forward(req, res, entry);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    requests: () => seen,
    close: () => void (closed = true),
    open: () => {
      closed = false;
      for (const go of waiting.splice(0)) go();
    },
    dispose: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
