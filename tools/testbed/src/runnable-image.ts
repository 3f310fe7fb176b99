import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TestbedError } from './errors.js';
import { runCommand } from './exec.js';
import { craneEnv, type PushOptions, type Registry } from './registry.js';
import { tarArchive } from './tar.js';

/** Debian's busybox-static: one static binary, so the image needs no libraries. */
export const DEFAULT_BUSYBOX = '/bin/busybox';

/**
 * The image's command: busybox's shell waits in one-second sleeps and exits 0 on SIGTERM, so a
 * Pod stops at once instead of waiting out its grace period (PID 1 ignores an unhandled SIGTERM).
 */
export const RUNNABLE_IMAGE_ENTRYPOINT = [
  '/bin/sh',
  '-c',
  "trap 'exit 0' TERM; while true; do sleep 1; done",
];

export interface RunnablePushOptions extends PushOptions {
  /** Path of a static busybox (default `/bin/busybox`, `apt-get install busybox-static`). */
  readonly busybox?: string;
}

const layers = new Map<string, Promise<string>>();

/** The busybox layer (`bin/busybox`, `bin/sh`, `bin/sleep`, ...), made once per work directory. */
function busyboxLayer(workDir: string, busybox: string): Promise<string> {
  const key = `${workDir}\0${busybox}`;
  let layer = layers.get(key);
  if (!layer) {
    layer = makeBusyboxLayer(workDir, busybox);
    layers.set(key, layer);
    layer.catch(() => layers.delete(key));
  }
  return layer;
}

async function makeBusyboxLayer(workDir: string, busybox: string): Promise<string> {
  const layer = join(workDir, 'busybox-layer.tar');
  if (existsSync(layer)) return layer;
  if (!existsSync(busybox)) {
    throw new TestbedError(
      'COMMAND_FAILED',
      `no static busybox at ${busybox}: runnable test images need Debian's busybox-static (apt-get install -y busybox-static)`,
    );
  }
  const root = await mkdtemp(join(workDir, 'busybox-'));
  try {
    await mkdir(join(root, 'bin'));
    await runCommand('cp', [busybox, join(root, 'bin/busybox')], { timeoutMs: 30_000 });
    for (const applet of ['sh', 'sleep', 'cat', 'ls', 'echo'])
      await symlink('busybox', join(root, 'bin', applet));
    const partial = `${layer}.${process.pid}.tmp`;
    await runCommand(
      'tar',
      ['--numeric-owner', '--owner=0', '--group=0', '-C', root, '-cf', partial, 'bin'],
      {
        timeoutMs: 30_000,
      },
    );
    await runCommand('mv', [partial, layer], { timeoutMs: 10_000 });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  return layer;
}

/**
 * Pushes an image a container runtime can run (static busybox looping on `sleep 1`, linux/amd64)
 * that no other call produces (a second layer holds random bytes) to `<registry>/<repo>:<tag>`;
 * returns its manifest digest.
 */
export async function pushRunnableImage(
  registry: Pick<Registry, 'host'>,
  repo: string,
  tag: string,
  options: RunnablePushOptions,
): Promise<string> {
  const base = await busyboxLayer(options.workDir, options.busybox ?? DEFAULT_BUSYBOX);
  const nonce = randomBytes(16).toString('hex');
  const layer = join(options.workDir, `layer-${nonce}.tar`);
  await writeFile(layer, tarArchive([{ name: 'signet-testbed/nonce', content: Buffer.from(`${nonce}\n`) }]));
  const reference = `${registry.host}/${repo}:${tag}`;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const env = craneEnv(options.workDir);
  try {
    await runCommand(
      options.crane,
      ['append', '--insecure', '--oci-empty-base', '-f', base, '-f', layer, '-t', reference],
      { env, timeoutMs },
    );
  } finally {
    await rm(layer, { force: true });
  }
  await runCommand(
    options.crane,
    [
      'mutate',
      '--insecure',
      '--set-platform',
      'linux/amd64',
      `--entrypoint=${RUNNABLE_IMAGE_ENTRYPOINT.join(',')}`,
      reference,
    ],
    { env, timeoutMs },
  );
  const { stdout } = await runCommand(options.crane, ['digest', '--insecure', reference], { env, timeoutMs });
  const digest = stdout.trim();
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) {
    throw new TestbedError('COMMAND_FAILED', `crane digest ${reference} printed ${JSON.stringify(stdout)}`);
  }
  return digest;
}
