// TrustRoot objects to trust material, once per TrustRoot: the resolver memoizes, so a TrustRoot
// referenced by many policies is loaded (and a `remote` one fetched) once.
import type { TrustRoot } from '@signet/k8s-types';
import { TrustRootError } from './errors.js';
import type { LivingTrustRoot } from './living-root.js';
import { publicGoodTrustRoot } from './public-good.js';
import { trustedRootFromSigstoreKeys } from './sigstore-keys.js';
import { type CompiledTrustRoot, compileTrustedRoot, PUBLIC_GOOD } from './trusted-root.js';
import { loadRemoteTrustRoot, loadRepositoryTrustRoot, type TufLoadOptions } from './tuf.js';

export type TrustRootOptions = TufLoadOptions;

/** Loads one TrustRoot object (any of its three forms). Throws {@link TrustRootError}. */
export async function compileTrustRoot(
  trustRoot: TrustRoot,
  options: TrustRootOptions = {},
): Promise<CompiledTrustRoot> {
  const name = trustRoot.metadata.name;
  const { remote, repository, sigstoreKeys } = trustRoot.spec;
  if (sigstoreKeys !== undefined) {
    const now = (options.clock ?? (() => new Date()))();
    return compileTrustedRoot(name, 'sigstore-keys', trustedRootFromSigstoreKeys(name, sigstoreKeys), now);
  }
  if (remote !== undefined) return loadRemoteTrustRoot(name, remote, options);
  if (repository !== undefined) return loadRepositoryTrustRoot(name, repository, options);
  throw new TrustRootError('TRUST_ROOT_INVALID', name, 'spec has none of sigstoreKeys, remote or repository');
}

/**
 * Finds trust roots by name for the policy compiler. `undefined` asks for the public-good root.
 * Rejects with {@link TrustRootError} (`TRUST_ROOT_NOT_FOUND` for an unknown name).
 */
export type TrustRootResolver = (name: string | undefined) => Promise<CompiledTrustRoot>;

/**
 * A memoizing resolver over `trustRoots` (TrustRoot objects or already compiled roots) and the
 * embedded public-good root (or `options.publicGood`). A failed load is remembered too, until a new
 * resolver is made (make one per change of the TrustRoot objects).
 */
export function trustRootResolver(
  trustRoots: readonly (TrustRoot | CompiledTrustRoot)[],
  options: TrustRootOptions & {
    readonly publicGood?: CompiledTrustRoot;
    /**
     * The default root kept current through TUF (`livingPublicGoodRoot`): its current root answers
     * `undefined`; with none yet (a private root whose mirror never answered), the default is
     * unavailable rather than silently the embedded public-good root.
     */
    readonly defaultRoot?: LivingTrustRoot;
  } = {},
): TrustRootResolver {
  const byName = new Map<string, TrustRoot | CompiledTrustRoot>();
  for (const root of trustRoots) byName.set('metadata' in root ? root.metadata.name : root.name, root);
  const loaded = new Map<string, Promise<CompiledTrustRoot>>();
  const living = options.defaultRoot;
  const publicGood = options.publicGood ?? living?.current;
  return (name) => {
    const key = name ?? PUBLIC_GOOD;
    let promise = loaded.get(key);
    if (promise === undefined) {
      promise =
        name === undefined && living !== undefined && publicGood === undefined
          ? Promise.reject(
              living.lastError ??
                new TrustRootError(
                  'TRUST_ROOT_UNAVAILABLE',
                  living.name,
                  'no trust root has been fetched from the TUF mirror yet',
                ),
            )
          : load(name, byName, options, publicGood);
      loaded.set(key, promise);
    }
    return promise;
  };
}

async function load(
  name: string | undefined,
  byName: ReadonlyMap<string, TrustRoot | CompiledTrustRoot>,
  options: TrustRootOptions,
  publicGood: CompiledTrustRoot | undefined,
): Promise<CompiledTrustRoot> {
  if (name === undefined)
    return publicGood ?? publicGoodTrustRoot(options.clock ? { clock: options.clock } : {});
  const root = byName.get(name);
  if (root === undefined) throw new TrustRootError('TRUST_ROOT_NOT_FOUND', name, 'no TrustRoot of that name');
  return 'metadata' in root ? compileTrustRoot(root, options) : root;
}
