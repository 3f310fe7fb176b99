// Loopback servers of these tests listen on ports 33000-34999 (a range kept for them on shared
// machines); a busy port is skipped.
import type { Server } from 'node:net';

export async function listenInRange(server: Pick<Server, 'listen' | 'once' | 'off'>): Promise<number> {
  for (let port = 33000 + Math.floor(Math.random() * 1900), tries = 0; tries < 100; port += 1, tries += 1) {
    const listening = await new Promise<boolean>((resolve) => {
      const onError = () => resolve(false);
      server.once('error', onError);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', onError);
        resolve(true);
      });
    });
    if (listening) return port;
  }
  throw new Error('no free port in 33000-34999');
}
