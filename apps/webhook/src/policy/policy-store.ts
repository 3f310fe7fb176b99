import { createHash } from 'node:crypto';
import { type CompiledPolicy, compilePolicies, type PolicySet } from '@signet/core';
import type { ClusterImagePolicy, PolicyControllerConfig } from '@signet/k8s-types';
import {
  type CompiledAuthorities,
  compileAuthorities,
  type PolicyToVerify,
  type TrustRootOptions,
  trustRootResolver,
} from '@signet/verifier';
import type { Logger } from '../logger.js';
import type { PolicyObjects, PolicyProblem } from './policy-objects.js';

/** Everything an admission needs about policies, compiled once per change and swapped atomically. */
export interface PolicySnapshot {
  /** Which policies match an image (core). */
  readonly set: PolicySet;
  /** How to verify each policy, by name (verifier). */
  readonly verify: ReadonlyMap<string, PolicyToVerify>;
  readonly config: PolicyControllerConfig;
  /** Policies that exist but cannot be enforced as written: they deny what they match. */
  readonly broken: ReadonlyMap<string, string>;
  readonly loadedAt: Date;
}

export interface CompileOptions {
  /** The webhook's namespace: `secretRef`s without a namespace are read here. */
  readonly namespace: string;
  readonly logger: Logger;
  readonly trust?: TrustRootOptions;
  readonly now?: () => Date;
}

export interface CompileResult {
  /** `undefined` when the set as a whole cannot be used (the previous snapshot stays). */
  readonly snapshot: PolicySnapshot | undefined;
  readonly problems: readonly PolicyProblem[];
}

function digestOf(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

/** A policy that cannot be enforced denies everything it matches, saying why. */
function brokenAuthorities(policy: ClusterImagePolicy, problem: string): CompiledAuthorities {
  return {
    policy: policy.metadata.name,
    mode: policy.spec.mode ?? 'enforce',
    authorities: [
      {
        type: 'static',
        action: 'fail',
        message: `policy cannot be enforced: ${problem}`,
        name: 'policy-error',
        index: 0,
        sources: [],
        signatureFormat: 'legacy',
        attestations: [],
      },
    ],
    specPolicy: undefined,
  };
}

/**
 * Compiles policy objects into a snapshot: core's policy set (globs, match selectors) and the
 * verifier's compiled authorities (keys, trust roots, CEL). A policy whose authorities cannot be
 * compiled (a CUE or Rego policy, a KMS key, a bad key) stays in the set and denies what it
 * matches with the reason: dropping it would let its images fall through to the no-match policy.
 * A policy whose globs or selectors are invalid makes the whole set unusable (core cannot tell
 * which images it was meant to guard): the caller keeps the previous snapshot.
 */
export async function compileSnapshot(
  objects: PolicyObjects,
  options: CompileOptions,
): Promise<CompileResult> {
  const problems: PolicyProblem[] = [...objects.problems];
  let set: PolicySet;
  try {
    set = compilePolicies(objects.policies, { noMatchPolicy: objects.config.noMatchPolicy });
  } catch (error) {
    problems.push({ object: 'ClusterImagePolicy', message: (error as Error).message, cause: error });
    return { snapshot: undefined, problems };
  }
  const secrets = new Map(objects.secrets.map((s) => [`${s.namespace}/${s.name}`, s.data]));
  const resolver = trustRootResolver(objects.trustRoots, options.trust ?? {});
  // Any change of the Secrets or TrustRoots a policy may read gives every policy a new revision.
  const shared = digestOf({
    secrets: objects.secrets.map((s) => [
      s.namespace,
      s.name,
      Object.entries(s.data).map(([k, v]) => [k, digestOf(Buffer.from(v).toString('base64'))]),
    ]),
    trustRoots: objects.trustRoots.map((t) => [t.metadata.name, t.spec]),
  });
  const broken = new Map<string, string>();
  const verify = new Map<string, PolicyToVerify>();
  await Promise.all(
    set.policies.map(async (policy: CompiledPolicy) => {
      const cip = policy.policy;
      let compiled: CompiledAuthorities;
      try {
        compiled = await compileAuthorities(cip, {
          trustRoots: resolver,
          lookupSecret: (namespace, name) => secrets.get(`${namespace}/${name}`),
          systemNamespace: options.namespace,
        });
      } catch (error) {
        const message = (error as Error).message;
        broken.set(policy.name, message);
        problems.push({ object: `ClusterImagePolicy/${policy.name}`, message, cause: error });
        compiled = brokenAuthorities(cip, message);
      }
      const revision = `${cip.metadata.uid ?? cip.metadata.name}:${digestOf(cip.spec)}:${shared}`;
      verify.set(policy.name, { name: policy.name, mode: policy.mode, revision, compiled });
    }),
  );
  const loadedAt = options.now?.() ?? new Date();
  return { snapshot: { set, verify, config: objects.config, broken, loadedAt }, problems };
}

/** Holds the current snapshot; readers always see one whole snapshot, never a mix. */
export class PolicyStore {
  #current: PolicySnapshot | undefined;
  #version = 0;

  get current(): PolicySnapshot | undefined {
    return this.#current;
  }

  /** Starts a compile; only the newest one started may be installed (an older one finishing late is dropped). */
  begin(): number {
    return ++this.#version;
  }

  install(version: number, snapshot: PolicySnapshot): boolean {
    if (version !== this.#version) return false;
    this.#current = snapshot;
    return true;
  }
}
