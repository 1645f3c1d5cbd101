import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { errorSummary } from './errors.ts';
import type { Logger } from './log.ts';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface Probe {
  /** Returns undefined when healthy, or the reason it is not. */
  (): Promise<string | undefined> | string | undefined;
}

export interface OpsServerOptions {
  address: string;
  port: number;
  registry: Registry;
  /** Metrics served after the registry's (another isolate's, in the Prometheus text format). */
  moreMetrics?: () => Promise<string>;
  healthz: Probe;
  readyz: Probe;
  /** Extra handlers by path prefix (e.g. Bull Board). */
  mounts?: { prefix: string; handler: Handler }[];
  /** Where a handler's failure is logged; the answer (500) never carries the error's text. */
  log?: Logger | undefined;
}

async function probe(res: ServerResponse, p: Probe): Promise<void> {
  const problem = await p();
  res.writeHead(problem ? 503 : 200, { 'content-type': 'text/plain' });
  res.end(problem ? `not ok: ${problem}\n` : 'ok\n');
}

/** The operations endpoint of a process: /healthz, /readyz, /metrics, and optional mounts. */
export async function startOpsServer(opts: OpsServerOptions): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const run = async (): Promise<void> => {
      if (path === '/healthz') return probe(res, opts.healthz);
      if (path === '/readyz') return probe(res, opts.readyz);
      if (path === '/metrics') {
        const more = opts.moreMetrics ? await opts.moreMetrics() : '';
        const own = await opts.registry.metrics();
        const body = more ? `${own}${own.endsWith('\n') ? '' : '\n'}${more}` : own;
        res.writeHead(200, { 'content-type': opts.registry.contentType });
        res.end(body);
        return;
      }
      const mount = opts.mounts?.find((m) => path === m.prefix || path.startsWith(`${m.prefix}/`));
      if (mount) return mount.handler(req, res);
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found\n');
    };
    run().catch((err: unknown) => {
      opts.log?.warn({ path, err: errorSummary(err) }, 'HTTP request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.address, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
