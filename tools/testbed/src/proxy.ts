// A real HTTP(S) forward proxy on loopback: tinyproxy (Debian package `tinyproxy`), which forwards
// plain HTTP and tunnels HTTPS with CONNECT, logging every request it handles, so tests can tell
// what went through the proxy and what went around it (NO_PROXY).
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TestbedError } from './errors.js';
import { freePort, type ManagedProcess, type ProcessGroup } from './process.js';

export interface HttpProxy {
  /** `http://127.0.0.1:PORT`, the value for HTTP_PROXY / HTTPS_PROXY. */
  readonly url: string;
  readonly process: ManagedProcess;
  /** The targets the proxy connected to so far (`host:port`), in order, from its log. */
  targets(): Promise<string[]>;
  stop(): Promise<void>;
}

const CANDIDATES = ['/usr/bin/tinyproxy', '/usr/sbin/tinyproxy'];

async function findTinyproxy(): Promise<string> {
  for (const candidate of CANDIDATES) {
    try {
      await access(candidate);
      return candidate;
    } catch {
      // try the next one
    }
  }
  throw new TestbedError(
    'COMMAND_FAILED',
    `tinyproxy is not installed (looked for ${CANDIDATES.join(', ')}); .ci/prepare installs it: apt-get install -y tinyproxy`,
  );
}

/** Starts tinyproxy on a free loopback port, allowing only loopback clients, CONNECT to any port. */
export async function startHttpProxy(options: {
  readonly group: ProcessGroup;
  readonly name?: string;
}): Promise<HttpProxy> {
  const binary = await findTinyproxy();
  const port = await freePort();
  const name = options.name ?? `tinyproxy-${port}`;
  const logFile = join(options.group.runDir, `${name}-requests.log`);
  const config = join(options.group.runDir, `${name}.conf`);
  // No ConnectPort line: CONNECT is allowed to every port (registries do not listen on 443 here).
  await writeFile(
    config,
    [
      `Port ${port}`,
      'Listen 127.0.0.1',
      'Timeout 30',
      `LogFile "${logFile}"`,
      'LogLevel Connect',
      'MaxClients 50',
      'Allow 127.0.0.1',
      'DisableViaHeader Yes',
      '',
    ].join('\n'),
  );
  const managed = await options.group.start({
    name,
    command: binary,
    args: ['-d', '-c', config],
    ready: { kind: 'tcp', port },
  });
  return {
    url: `http://127.0.0.1:${port}`,
    process: managed,
    targets: async () => {
      const log = await readFile(logFile, 'utf8').catch(() => '');
      // CONNECT lines read `Connect (file descriptor N): ...`; requests `Request (file descriptor N): GET http://host:port/...`
      const found: string[] = [];
      for (const match of log.matchAll(
        /Request \(file descriptor \d+\): (?:CONNECT (\S+)|\w+ https?:\/\/([^/\s]+))/g,
      )) {
        found.push((match[1] ?? match[2]) as string);
      }
      return found;
    },
    stop: async () => {
      await managed.stop();
    },
  };
}
