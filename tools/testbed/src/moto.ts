// moto in server mode (PyPI `moto[server]`): real AWS API implementations (STS, ECR, ...) on
// loopback, for the cloud credential tests. Installed by .ci/prepare into a versioned virtualenv
// under the testbed cache; never downloaded by a test.
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { TestbedError } from './errors.js';
import { freePort, type ManagedProcess, type ProcessGroup } from './process.js';
import { cacheRoot } from './tools.js';

export const MOTO_VERSION = '5.2.5';

/** The virtualenv .ci/prepare installs moto into: `<cache>/python/moto-<version>`. */
export function motoHome(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'python', `moto-${MOTO_VERSION}`);
}

export interface Moto {
  /** `http://127.0.0.1:PORT`, the endpoint for every AWS service moto serves. */
  readonly url: string;
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

/** Starts `moto_server` on a free loopback port and waits until it answers. */
export async function startMoto(options: { readonly group: ProcessGroup }): Promise<Moto> {
  const binary = join(motoHome(), 'bin', 'moto_server');
  try {
    await access(join(motoHome(), '.installed'));
  } catch {
    throw new TestbedError(
      'COMMAND_FAILED',
      `moto ${MOTO_VERSION} is not installed at ${motoHome()}; run .ci/prepare ` +
        '(a virtualenv with moto[ecr,sts], flask and flask-cors from PyPI)',
    );
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const managed = await options.group.start({
    name: `moto-${port}`,
    command: binary,
    args: ['-H', '127.0.0.1', '-p', String(port)],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.group.runDir },
    ready: { kind: 'http', url: `${url}/moto-api/` },
    readyTimeoutMs: 60_000,
  });
  return { url, process: managed, stop: () => managed.stop().then(() => undefined) };
}
