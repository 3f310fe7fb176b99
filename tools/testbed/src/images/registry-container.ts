// The CNCF distribution registry (the testbed's `registry` binary) as a container on a Docker
// network, so kind's nodes pull from it and Signet's Pods verify against it. The host reaches
// it on its address on that network (the host is the network's gateway); nothing is published.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TestbedError } from '../errors.js';
import { httpStatus } from '../process.js';
import { ensureTools, toolSpec } from '../tools.js';
import { buildComponentImage } from './component-images.js';
import type { Docker } from './docker.js';

const PORT = 5000;
const CONFIG = [
  'version: 0.1',
  'log:',
  '  level: info',
  '  accesslog:',
  '    disabled: true',
  'storage:',
  '  filesystem:',
  '    rootdirectory: /var/lib/registry',
  '  delete:',
  '    enabled: true',
  'http:',
  `  addr: 0.0.0.0:${PORT}`,
  '',
].join('\n');

export interface RegistryContainer {
  /** `<address>:5000`, the registry part of image references (nodes, Pods and the host alike). */
  readonly host: string;
  readonly url: string;
  readonly container: string;
  /** Stops the container (its storage stays): the registry is down for everyone. */
  stop(): Promise<void>;
  /** Starts it again on the same address and waits until it answers. */
  start(): Promise<void>;
  /** Removes the container and its storage. */
  remove(): Promise<void>;
}

/** The registry's image, built once per engine (`signet-e2e/registry:<version>`). */
async function registryImage(docker: Docker, workDir: string): Promise<string> {
  const reference = `localhost/signet/registry:${toolSpec('registry').version}`;
  if (await docker.imageExists(reference)) return reference;
  const { registry } = await ensureTools(['registry']);
  const configDir = await mkdtemp(join(workDir, 'registry-config-'));
  try {
    await writeFile(join(configDir, 'config.yml'), CONFIG);
    await buildComponentImage(
      docker,
      {
        reference,
        files: [
          { from: registry, to: 'registry' },
          { from: join(configDir, 'config.yml'), to: 'etc/registry/config.yml' },
        ],
        changes: [
          'ENTRYPOINT ["/registry"]',
          'CMD ["serve", "/etc/registry/config.yml"]',
          // distribution exports traces through OpenTelemetry's autoexport; there is no collector.
          'ENV OTEL_TRACES_EXPORTER=none OTEL_SDK_DISABLED=true',
        ],
      },
      workDir,
    );
  } finally {
    await rm(configDir, { recursive: true, force: true });
  }
  return reference;
}

async function waitUntilServing(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await httpStatus(`${url}/v2/`, 2_000)) !== 200) {
    if (Date.now() > deadline)
      throw new TestbedError('NOT_READY', `the registry at ${url} did not answer GET /v2/`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Starts the registry container `name` on `network` at the fixed address `ip` (the network needs a
 * configured subnet: a restarted container keeps its address, so image references stay valid) and
 * waits until `GET /v2/` answers 200.
 */
export async function startRegistryContainer(options: {
  readonly docker: Docker;
  readonly network: string;
  readonly ip: string;
  readonly name: string;
  readonly workDir: string;
}): Promise<RegistryContainer> {
  const { docker, name } = options;
  const image = await registryImage(docker, options.workDir);
  await docker.run([
    'run',
    '--detach',
    '--name',
    name,
    '--network',
    options.network,
    '--ip',
    options.ip,
    image,
  ]);
  const host = `${options.ip}:${PORT}`;
  const url = `http://${host}`;
  await waitUntilServing(url, 30_000);
  return {
    host,
    url,
    container: name,
    stop: async () => {
      await docker.run(['stop', '--time', '5', name]);
    },
    start: async () => {
      await docker.run(['start', name]);
      await waitUntilServing(url, 30_000);
    },
    remove: async () => {
      await docker.run(['rm', '--force', '--volumes', name]).catch(() => undefined);
    },
  };
}
