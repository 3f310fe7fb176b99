import { join } from 'node:path';
import { craneEnv, createCosign, ensureTools, pushRunnableImage, runCommand } from '@signet/testbed';
import type { TestImages } from '../scenarios/test-images.js';
import type { KindCluster } from './kind-cluster.js';

interface PushOptions {
  readonly signed?: boolean;
  readonly format?: 'legacy' | 'bundle';
}

export interface KindTestImages extends TestImages {
  /**
   * Pushes another runnable image (`app:<tag>` in the cluster's registry), signed with the test
   * key unless `signed` is false, in the legacy `.sig` tag unless `format` is `bundle` (cosign 3's
   * default: here in the `sha256-<hex>` fallback tag); returns its digest reference.
   */
  push(tag: string, options?: PushOptions): Promise<string>;
  /** Points `<registry>/app:<tag>` at the image `digestRef` (what a `docker push` of a moved tag does). */
  retag(digestRef: string, tag: string): Promise<void>;
}

/**
 * Runnable test images (static busybox; see the testbed's `pushRunnableImage`) in the kind
 * cluster's registry container, which the nodes pull from: `app:v1` unsigned, `app:v2` signed by
 * a fresh test key with the real cosign (legacy `.sig` tag: distribution has no referrers API).
 */
export async function prepareKindTestImages(
  cluster: KindCluster,
  options: { readonly onProgress?: (line: string) => void } = {},
): Promise<KindTestImages> {
  const report = options.onProgress ?? (() => {});
  const workDir = cluster.runDir;
  const [{ crane }, cosign] = await Promise.all([
    ensureTools(['crane', 'cosign']),
    createCosign({ workDir }),
  ]);
  const registry = { host: cluster.registry.host, url: cluster.registry.url };
  const busybox = process.env.SIGNET_BUSYBOX;
  const key = await cosign.generateKeyPair(join(workDir, 'signing-key'), 'signet-e2e');
  const push = async (tag: string, pushOptions: PushOptions = {}) => {
    const digest = await pushRunnableImage(registry, 'app', tag, {
      crane,
      workDir,
      ...(busybox ? { busybox } : {}),
    });
    const reference = `${registry.host}/app@${digest}`;
    if (pushOptions.signed === false) return reference;
    if (pushOptions.format === 'bundle') await cosign.signBundleKeyed(reference, key);
    else await cosign.signLegacyKeyed(reference, key);
    return reference;
  };
  const [unsigned, signed] = await Promise.all([push('v1', { signed: false }), push('v2')]);
  report(`pushed ${unsigned} (app:v1, unsigned) and ${signed} (app:v2, signed), runnable (busybox)`);
  const retag = async (digestRef: string, tag: string) => {
    await runCommand(crane, ['tag', '--insecure', digestRef, tag], {
      env: craneEnv(workDir),
      timeoutMs: 60_000,
    });
  };
  return { registry, cosign, key, unsigned, signed, push, retag };
}
