import { TestbedError } from './errors.js';
import { runCommand } from './exec.js';
import { craneEnv, type PushOptions, pushRandomImage, type Registry } from './registry.js';

/** An image index pushed by `pushImageIndex`: its digest, and each platform manifest it lists. */
export interface PushedIndex {
  readonly digest: string;
  readonly platforms: readonly { readonly platform: string; readonly digest: string }[];
}

export interface IndexPushOptions extends PushOptions {
  /** `os/arch[/variant]` of each platform manifest (default `linux/amd64`, `linux/arm64`). */
  readonly platforms?: readonly string[];
}

/**
 * Pushes a multi-architecture image to `<registry>/<repo>:<tag>`: one random image per platform
 * (`crane mutate --set-platform`, tagged `<tag>-<os>-<arch>`), then an OCI image index listing them
 * (`crane index append`, which takes each entry's platform from its config file).
 */
export async function pushImageIndex(
  registry: Pick<Registry, 'host'>,
  repo: string,
  tag: string,
  options: IndexPushOptions,
): Promise<PushedIndex> {
  const env = craneEnv(options.workDir);
  const timeoutMs = options.timeoutMs ?? 60_000;
  const crane = (args: readonly string[]) => runCommand(options.crane, args, { env, timeoutMs });
  const digestOf = async (reference: string) => {
    const { stdout } = await crane(['digest', '--insecure', reference]);
    const digest = stdout.trim();
    if (!/^sha256:[0-9a-f]{64}$/.test(digest))
      throw new TestbedError('COMMAND_FAILED', `crane digest ${reference} printed ${JSON.stringify(stdout)}`);
    return digest;
  };
  const platforms: { platform: string; digest: string }[] = [];
  for (const platform of options.platforms ?? ['linux/amd64', 'linux/arm64']) {
    const platformTag = `${tag}-${platform.replaceAll('/', '-')}`;
    await pushRandomImage(registry, repo, platformTag, options);
    const reference = `${registry.host}/${repo}:${platformTag}`;
    await crane(['mutate', '--insecure', '--set-platform', platform, reference]);
    platforms.push({ platform, digest: await digestOf(reference) });
  }
  const index = `${registry.host}/${repo}:${tag}`;
  const manifests = platforms.flatMap(({ digest }) => ['-m', `${registry.host}/${repo}@${digest}`]);
  await crane(['index', 'append', '--insecure', ...manifests, '-t', index]);
  return { digest: await digestOf(index), platforms };
}
