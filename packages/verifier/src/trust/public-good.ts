// The Sigstore public-good trust root, read offline from the TUF seed that ships inside
// @sigstore/tuf (`seeds.json`: the repository's root.json and its `trusted_root.json` target).
// No network: it is as current as the installed @sigstore/tuf; a `remote` TrustRoot refreshes.

import { decodeBase64 } from '../sigstore/pem.js';
import { TrustRootError } from './errors.js';
import { type CompiledTrustRoot, PUBLIC_GOOD, trustRootFromJSON } from './trusted-root.js';

export const PUBLIC_GOOD_MIRROR = 'https://tuf-repo-cdn.sigstore.dev';

interface Seed {
  readonly 'root.json'?: string;
  readonly targets?: Readonly<Record<string, string>>;
}

/** Loads the embedded public-good trusted root. Throws {@link TrustRootError} when the seed is unusable. */
export async function publicGoodTrustRoot(
  options: { readonly clock?: () => Date } = {},
): Promise<CompiledTrustRoot> {
  const module = await import('@sigstore/tuf/seeds.json', { with: { type: 'json' } });
  const seeds = module.default as unknown as Readonly<Record<string, Seed>>;
  return trustRootFromSeed(seeds[PUBLIC_GOOD_MIRROR], options.clock);
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
