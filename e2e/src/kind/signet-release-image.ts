// Signet's image as a release ships it: built offline with its SBOM and provenance
// (apps/webhook/image/build-offline.sh --attestations), pushed to the cluster's registry, signed
// by the project's key with the real cosign and carrying both as attestations (`cosign attest
// --type cyclonedx` and `--type slsaprovenance1`). The test run's fresh key pair stands in for the
// project's release key (docs/releasing.md).
import { createHash } from 'node:crypto';
import { access, mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Cosign,
  type CosignKeyPair,
  cacheRoot,
  craneEnv,
  createCosign,
  ensureTools,
  runCommand,
} from '@signet/testbed';
import { signetChartDir } from '../scenarios/kube.js';
import type { KindCluster } from './kind-cluster.js';

export interface SignetReleaseImage {
  /** The local image (`signet:e2e-<hash>`) in the engine. */
  readonly local: string;
  /** `<registry>/signet`, where the nodes pull it from. */
  readonly repository: string;
  /** The pushed manifest's digest (`sha256:...`). */
  readonly digest: string;
  /** `<registry>/signet@<digest>`: what the chart is installed with. */
  readonly reference: string;
  readonly version: string;
  /** The project's key (a test key pair) that signed the image and its attestations. */
  readonly key: CosignKeyPair;
  readonly cosign: Cosign;
  /** CycloneDX SBOM and SLSA provenance predicate files made by the build. */
  readonly sbomPath: string;
  readonly provenancePath: string;
  /**
   * Another image of the same content (an annotation added, so another digest, none of the
   * original's signatures) at `<registry>/<repository>`; returns its digest reference.
   */
  variant(repository: string): Promise<string>;
}

const repoRoot = () => join(signetChartDir(), '..', '..', '..');

function withoutNodeEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_ENV: _ignored, ...rest } = env;
  return rest;
}

/**
 * A tag that changes with Signet's built code and the commit (the image's revision label and its
 * provenance name it), so a stale image is never reused.
 */
export async function signetImageTag(): Promise<string> {
  const hash = createHash('sha256');
  const { stdout: commit } = await runCommand('git', ['rev-parse', 'HEAD'], {
    cwd: repoRoot(),
    timeoutMs: 30_000,
  });
  hash.update(commit.trim());
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else hash.update(entry.name).update(await readFile(path));
    }
  };
  await walk(join(repoRoot(), 'apps', 'webhook', 'dist'));
  await walk(signetChartDir());
  for (const file of [
    'pnpm-lock.yaml',
    'apps/webhook/package.json',
    'apps/webhook/image/Dockerfile.offline',
    'apps/webhook/image/build-offline.sh',
    'apps/webhook/scripts/image-attestations.ts',
  ]) {
    hash.update(await readFile(join(repoRoot(), file)));
  }
  return `e2e-${hash.digest('hex').slice(0, 12)}`;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * Builds (or reuses: the image and its attestations are kept by tag), pushes, signs and attests
 * Signet's image in `cluster`'s registry.
 */
export async function publishSignetImage(
  cluster: KindCluster,
  options: { readonly timed: <T>(step: string, work: () => Promise<T>) => Promise<T> },
): Promise<SignetReleaseImage> {
  const tag = await signetImageTag();
  const local = `signet:${tag}`;
  const attestations = join(cacheRoot(), 'images', 'signet-attestations', tag);
  const sbomPath = join(attestations, 'sbom.cdx.json');
  const provenancePath = join(attestations, 'provenance.json');
  await options.timed('image built, with its SBOM and provenance', async () => {
    const built = (await cluster.docker.imageExists(local)) && (await exists(provenancePath));
    if (built) return;
    await mkdir(attestations, { recursive: true });
    await runCommand(
      join(repoRoot(), 'apps/webhook/image/build-offline.sh'),
      [local, '--attestations', attestations],
      {
        // Not the test runner's NODE_ENV=test: pnpm would re-install the workspace without devDependencies.
        env: { ...withoutNodeEnv(process.env), ...cluster.docker.env },
        timeoutMs: 900_000,
      },
    );
  });
  const version = JSON.parse(await readFile(join(repoRoot(), 'apps/webhook/package.json'), 'utf8'))
    .version as string;
  const { crane } = await ensureTools(['crane']);
  const env = craneEnv(cluster.runDir);
  const repository = `${cluster.registry.host}/signet`;
  const digest = await options.timed('image pushed to the cluster registry', async () => {
    const tarball = join(cluster.runDir, 'signet-image.tar');
    await runCommand('docker', ['save', '--output', tarball, local], {
      env: { ...process.env, ...cluster.docker.env },
      timeoutMs: 300_000,
    });
    await runCommand(crane, ['push', '--insecure', tarball, `${repository}:${tag}`], {
      env,
      timeoutMs: 300_000,
    });
    const { stdout } = await runCommand(crane, ['digest', '--insecure', `${repository}:${tag}`], {
      env,
      timeoutMs: 60_000,
    });
    return stdout.trim();
  });
  const reference = `${repository}@${digest}`;
  const cosign = await createCosign({ workDir: cluster.runDir });
  const key = await cosign.generateKeyPair(join(cluster.runDir, 'signet-release-key'), 'signet-release');
  await options.timed('image signed, SBOM and provenance attested (cosign)', async () => {
    await cosign.signLegacyKeyed(reference, key);
    await cosign.attest(reference, key, { predicatePath: sbomPath, type: 'cyclonedx', format: 'legacy' });
    await cosign.attest(reference, key, {
      predicatePath: provenancePath,
      type: 'slsaprovenance1',
      format: 'legacy',
    });
  });
  return {
    local,
    repository,
    digest,
    reference,
    version,
    key,
    cosign,
    sbomPath,
    provenancePath,
    variant: async (target) => {
      const to = `${cluster.registry.host}/${target}:${tag}`;
      const annotation = `dev.signet.e2e.variant=${target}`;
      await runCommand(crane, ['mutate', '--insecure', '--annotation', annotation, '--tag', to, reference], {
        env,
        timeoutMs: 120_000,
      });
      const { stdout } = await runCommand(crane, ['digest', '--insecure', to], { env, timeoutMs: 60_000 });
      return `${cluster.registry.host}/${target}@${stdout.trim()}`;
    },
  };
}
