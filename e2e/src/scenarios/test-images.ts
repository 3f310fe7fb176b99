import { join } from 'node:path';
import {
  type Cosign,
  type CosignKeyPair,
  createCosign,
  ensureTools,
  type ProcessGroup,
  pushRandomImage,
  type Registry,
  startRegistry,
} from '@signet/testbed';

/** Two images no other run has pushed, in a loopback registry, one signed by a test key. */
export interface TestImages {
  /** Where they are: a loopback registry process, or the registry container of a kind cluster. */
  readonly registry: Pick<Registry, 'host' | 'url'>;
  readonly cosign: Cosign;
  /** The key `signed` is signed with (`publicKey` is the PEM file to verify against). */
  readonly key: CosignKeyPair;
  /** `127.0.0.1:PORT/app@sha256:...`, pushed as `app:v1`, never signed. */
  readonly unsigned: string;
  /** `127.0.0.1:PORT/app@sha256:...`, pushed as `app:v2`, signed with `cosign sign --key` (legacy `.sig` tag). */
  readonly signed: string;
}

export interface TestImagesOptions {
  /** The registry runs in this group (stopped with it). */
  readonly group: ProcessGroup;
  /** Scratch space for layers, the key pair and cosign's HOME. */
  readonly workDir: string;
  readonly onProgress?: (message: string) => void;
}

/**
 * Starts a plain registry (CNCF distribution, no referrers API), pushes `app:v1` and `app:v2`
 * (random one-layer images) and signs v2 with a fresh key. Returns digest references: a digest
 * is what a signature covers, and what a Deployment that pins images runs.
 */
export async function prepareTestImages(options: TestImagesOptions): Promise<TestImages> {
  const report = options.onProgress ?? (() => {});
  const [registry, { crane }, cosign] = await Promise.all([
    startRegistry({ referrers: false, group: options.group }),
    ensureTools(['crane']),
    createCosign({ workDir: options.workDir }),
  ]);
  report(`registry ${registry.url} started`);
  const push = async (tag: string) => {
    const digest = await pushRandomImage(registry, 'app', tag, { crane, workDir: options.workDir });
    return `${registry.host}/app@${digest}`;
  };
  const [unsigned, signed, key] = await Promise.all([
    push('v1'),
    push('v2'),
    cosign.generateKeyPair(join(options.workDir, 'signing-key'), 'signet-e2e'),
  ]);
  await cosign.signLegacyKeyed(signed, key);
  report(`pushed ${unsigned} (app:v1, unsigned) and ${signed} (app:v2, signed)`);
  return { registry, cosign, key, unsigned, signed };
}
