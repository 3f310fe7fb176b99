// A real HTTP(S) forward proxy on loopback: `forward-proxy` (go/forward-proxy, our small main over
// github.com/elazarl/goproxy, built from the Go module proxy like the registries), which forwards
// plain HTTP and tunnels HTTPS with CONNECT to any port, and logs every target it connects to, so
// tests can tell what went through the proxy and what went around it (NO_PROXY).
import type { ToolProgress } from './go-build.js';
import { freePort, type ManagedProcess, type ProcessGroup } from './process.js';
import { ensureTools } from './tools.js';

export interface HttpProxy {
  /** `http://127.0.0.1:PORT`, the value for HTTP_PROXY / HTTPS_PROXY. */
  readonly url: string;
  readonly process: ManagedProcess;
  /** The targets the proxy connected to so far (`host:port`), in order, from its log. */
  targets(): Promise<string[]>;
  stop(): Promise<void>;
}

/** `target CONNECT 127.0.0.1:5000`, `target GET 127.0.0.1:5000`: one line per request it forwards. */
const TARGET_LINE = /^target \S+ (\S+)$/gm;

/** Starts the forward proxy on a free loopback port (building it on first use). */
export async function startHttpProxy(options: {
  readonly group: ProcessGroup;
  readonly name?: string;
  readonly onProgress?: (event: ToolProgress) => void;
}): Promise<HttpProxy> {
  const { 'forward-proxy': binary } = await ensureTools(
    ['forward-proxy'],
    options.onProgress ? { onProgress: options.onProgress } : {},
  );
  const port = await freePort();
  const managed = await options.group.start({
    name: options.name ?? `forward-proxy-${port}`,
    command: binary,
    args: ['-addr', `127.0.0.1:${port}`],
    ready: { kind: 'tcp', port },
  });
  return {
    url: `http://127.0.0.1:${port}`,
    process: managed,
    targets: async () => [...(await managed.log()).matchAll(TARGET_LINE)].map((match) => match[1] as string),
    stop: async () => {
      await managed.stop();
    },
  };
}
