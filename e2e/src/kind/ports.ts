import { createServer } from 'node:net';

/**
 * The range the kind suite binds host ports in (kind's API server port, the naive fixture):
 * `SIGNET_E2E_PORTS=LOW-HIGH`, default 30000-32999, so runs beside other work on the machine
 * keep out of each other's way.
 */
export function portRange(env: NodeJS.ProcessEnv = process.env): { low: number; high: number } {
  const match = /^(\d+)-(\d+)$/.exec(env.SIGNET_E2E_PORTS ?? '30000-32999');
  const low = Number(match?.[1] ?? 30000);
  const high = Number(match?.[2] ?? 32999);
  if (!(low > 0 && high >= low && high < 65536))
    throw new Error(`SIGNET_E2E_PORTS must be LOW-HIGH, got ${env.SIGNET_E2E_PORTS}`);
  return { low, high };
}

function canBind(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port in `portRange()` that is free on `host` now (random tries; bounded). */
export async function freePortInRange(host: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { low, high } = portRange(env);
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await canBind(host, port)) return port;
  }
  throw new Error(`no free port on ${host} in ${low}-${high} after 200 tries`);
}
