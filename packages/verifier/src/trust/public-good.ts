// The Sigstore public-good trust root, read offline from the TUF seed that ships inside
// @sigstore/tuf (`seeds.json`: the repository's root.json and its `trusted_root.json` target).
// No network: it is as current as the installed @sigstore/tuf. `livingPublicGoodRoot` keeps it
// current through TUF (`--tuf-mirror`), starting from this copy.

import { decodeBase64 } from '../sigstore/pem.js';
import { TrustRootError } from './errors.js';
import { LivingTrustRoot, type LivingTrustRootOptions } from './living-root.js';
import { type CompiledTrustRoot, PUBLIC_GOOD, trustRootFromJSON } from './trusted-root.js';
import { TufMetadataCache } from './tuf-cache.js';

export const PUBLIC_GOOD_MIRROR = 'https://tuf-repo-cdn.sigstore.dev';

interface Seed {
  readonly 'root.json'?: string;
  readonly targets?: Readonly<Record<string, string>>;
}

async function publicGoodSeed(): Promise<Seed | undefined> {
  const module = await import('@sigstore/tuf/seeds.json', { with: { type: 'json' } });
  const seeds = module.default as unknown as Readonly<Record<string, Seed>>;
  return seeds[PUBLIC_GOOD_MIRROR];
}

/** Loads the embedded public-good trusted root. Throws {@link TrustRootError} when the seed is unusable. */
export async function publicGoodTrustRoot(
  options: { readonly clock?: () => Date } = {},
): Promise<CompiledTrustRoot> {
  return trustRootFromSeed(await publicGoodSeed(), options.clock);
}

export type LivingPublicGoodOptions = Omit<LivingTrustRootOptions, 'name' | 'origin' | 'mirror' | 'root'> & {
  /** Default: Sigstore's public-good CDN. A mirror of it, or a private Sigstore's TUF repository. */
  readonly mirror?: string;
  /** The initial root (`--tuf-root`); default: the public-good `root.json` embedded in @sigstore/tuf. */
  readonly root?: Buffer;
  /** A directory for the verified metadata (one entry: a changed mirror or root replaces it); ignored with `cache`. */
  readonly cacheDir?: string;
};

/**
 * The default trust root, kept current through TUF: starts from the embedded public-good root (or
 * the fallback given), which stays in use until a refresh from `mirror` verifies. With a private
 * Sigstore's mirror and root, what it serves replaces the public-good root entirely, as
 * policy-controller's `--tuf-mirror`/`--tuf-root` do.
 */
export async function livingPublicGoodRoot(options: LivingPublicGoodOptions = {}): Promise<LivingTrustRoot> {
  const seed = await publicGoodSeed();
  // A custom root is another Sigstore (or another lineage): the embedded root is no fallback for it.
  const fallback =
    options.fallback ?? (options.root === undefined ? trustRootFromSeed(seed, options.clock) : undefined);
  const root = options.root ?? decodeBase64(seed?.['root.json'] ?? '');
  const { cacheDir, ...living } = options;
  const cache =
    options.cache ??
    (cacheDir === undefined ? undefined : new TufMetadataCache({ dir: cacheDir, maxEntries: 1 }));
  return new LivingTrustRoot({
    ...living,
    ...(cache === undefined ? {} : { cache }),
    name: PUBLIC_GOOD,
    origin: 'public-good',
    mirror: options.mirror ?? PUBLIC_GOOD_MIRROR,
    root,
    ...(fallback === undefined ? {} : { fallback }),
  });
}

/** The `trusted_root.json` target of a TUF seed. */
export function trustRootFromSeed(seed: Seed | undefined, clock?: () => Date): CompiledTrustRoot {
  const encoded = seed?.targets?.['trusted_root.json'];
  if (encoded === undefined) {
    throw new TrustRootError(
      'TRUST_ROOT_UNAVAILABLE',
      PUBLIC_GOOD,
      '@sigstore/tuf ships no trusted_root.json seed',
    );
  }
  let document: Buffer;
  try {
    document = decodeBase64(encoded);
  } catch (error) {
    throw new TrustRootError('TRUST_ROOT_INVALID', PUBLIC_GOOD, 'the trusted_root.json seed is not base64', {
      cause: error,
    });
  }
  return trustRootFromJSON(document, {
    name: PUBLIC_GOOD,
    origin: 'public-good',
    ...(clock ? { clock } : {}),
  });
}
