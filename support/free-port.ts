import { createServer } from 'node:net';

/**
 * A TCP port free on 127.0.0.1 at the time of asking (the OS picks it; the probe socket is closed
 * before this resolves). Another process may take it before the caller listens: callers that start
 * a server on it retry on a new one when the bind fails.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
