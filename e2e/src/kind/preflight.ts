import { existsSync, readFileSync } from 'node:fs';
import { DEFAULT_BUSYBOX, Docker, dockerProblem } from '@signet/testbed';

/** CAP_SYS_RESOURCE's bit in /proc/self/status CapBnd: missing here, granted by Docker to privileged containers. */
const CAP_SYS_RESOURCE = 24n;

function boundingSetLacksSysResource(): boolean {
  const status = existsSync('/proc/self/status') ? readFileSync('/proc/self/status', 'utf8') : '';
  const hex = /^CapBnd:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  return hex !== undefined && ((BigInt(`0x${hex}`) >> CAP_SYS_RESOURCE) & 1n) === 0n;
}

/**
 * Why the kind suite cannot run on this machine, or undefined when it can: a Docker engine that
 * answers at DOCKER_HOST, able to start privileged containers (kind's nodes), and a static busybox
 * for the test images.
 */
export async function kindUnavailableReason(
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const problem = await dockerProblem(env.DOCKER_HOST);
  if (problem !== undefined) {
    return (
      `no Docker engine answers (DOCKER_HOST=${env.DOCKER_HOST ?? 'unset'}): ${problem}. ` +
      'Start one with `pnpm --filter @signet/testbed docker-engine start <dir>` (needs docker.io) and export the DOCKER_HOST it prints'
    );
  }
  if (boundingSetLacksSysResource()) {
    const docker = new Docker(env.DOCKER_HOST);
    const runtime = (await docker.run(['info', '--format', '{{.DefaultRuntime}}'])).stdout.trim();
    if (runtime !== 'signet-runc') {
      return (
        'this machine does not grant CAP_SYS_RESOURCE, so privileged containers (kind nodes) fail under ' +
        `the engine's default runtime "${runtime}"; start the engine with \`pnpm --filter @signet/testbed docker-engine start <dir>\`, ` +
        'which registers the capability-dropping runtime wrapper'
      );
    }
  }
  const busybox = env.SIGNET_BUSYBOX ?? DEFAULT_BUSYBOX;
  if (!existsSync(busybox))
    return `no static busybox at ${busybox} for the test images (apt-get install -y busybox-static)`;
  return undefined;
}
