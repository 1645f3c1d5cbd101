/** The watcher's ops server on a free loopback port with one handler mounted, as unit tests and benchmarks start it. */
import { Registry } from 'prom-client';
import { startOpsServer, type Handler } from '../src/common/http.ts';

export interface MountedServer {
  /** `http://127.0.0.1:<port>`, without the prefix. */
  url: string;
  close: () => Promise<void>;
}

export async function serveMount(prefix: string, handler: Handler): Promise<MountedServer> {
  const ops = await startOpsServer({
    address: '127.0.0.1',
    port: 0,
    registry: new Registry(),
    healthz: () => undefined,
    readyz: () => undefined,
    mounts: [{ prefix, handler }],
  });
  return { url: `http://127.0.0.1:${ops.port}`, close: () => ops.close() };
}
