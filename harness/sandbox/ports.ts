import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago: binds port 0, reads the port the kernel chose, and
 * releases it. Another process may take it before the caller binds, so callers retry on EADDRINUSE.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close((err) => {
        if (err) reject(err);
        else if (port > 0) resolve(port);
        else reject(new Error('could not determine a free port'));
      });
    });
  });
}
