import { createHash } from 'node:crypto';
import type { AdmissionDecision, ImageReference } from '@signet/core';
import {
  type CompiledPolicy,
  compilePolicy,
  type ImageCheck,
  type MatchSubject,
  matchPolicies,
  type PolicyMatch,
  type PolicySet,
  planChecks,
  policySet,
} from '@signet/core';
import type { ClusterImagePolicy, PolicyControllerConfig } from '@signet/k8s-types';
import {
  type CompiledAuthorities,
  compileAuthorities,
  type PolicyToVerify,
  type TrustRootOptions,
  trustRootResolver,
} from '@signet/verifier';
import type { PolicyObjects, PolicyProblem } from './policy-objects.js';

/**
 * One ClusterImagePolicy, compiled once per change: core's half (globs, match selectors, mode)
 * and the verifier's half (authorities, revision), in one record so nothing is joined by name.
 */
export interface SnapshotPolicy extends CompiledPolicy {
  readonly verify: PolicyToVerify;
  /** Why the policy cannot be enforced as written; it then denies what it matches, saying so. */
  readonly broken: string | undefined;
}

/** Everything an admission needs about policies, compiled once per change and swapped atomically. */
export interface PolicySnapshot {
  readonly set: PolicySet<SnapshotPolicy>;
  readonly config: PolicyControllerConfig;
  /** Policies that exist but cannot be enforced as written: they deny what they match. */
  readonly broken: ReadonlyMap<string, string>;
  readonly loadedAt: Date;
  /** What must be verified for a decision, each image with the records of the policies it must pass. */
  checksFor(decision: AdmissionDecision, subject: MatchSubject): ImageCheck<SnapshotPolicy>[];
  /** The policies one image must pass in the context of `subject`. */
  match(reference: ImageReference, subject: MatchSubject): PolicyMatch<SnapshotPolicy>;
}

export interface CompileOptions {
  /** The webhook's namespace: `secretRef`s without a namespace are read here. */
  readonly namespace: string;
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
function brokenAuthorities(policy: CompiledPolicy, problem: string): CompiledAuthorities {
  return {
    policy: policy.name,
    mode: policy.mode,
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
 * Compiles policy objects into a snapshot: per policy core's matcher (globs, match selectors) and
 * the verifier's compiled authorities (keys, trust roots, CEL). A policy whose authorities cannot
 * be compiled (a CUE or Rego policy, a KMS key, a bad key) stays in the set and denies what it
 * matches with the reason: dropping it would let its images fall through to the no-match policy.
 * A policy whose globs or selectors are invalid makes the whole set unusable (core cannot tell
 * which images it was meant to guard): the caller keeps the previous snapshot.
 */
export async function compileSnapshot(
  objects: PolicyObjects,
  options: CompileOptions,
): Promise<CompileResult> {
  const problems: PolicyProblem[] = [...objects.problems];
  let matchers: CompiledPolicy[];
  try {
    matchers = objects.policies.map(compilePolicy);
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
  const records = await Promise.all(
    matchers.map(async (matcher): Promise<SnapshotPolicy> => {
      const cip: ClusterImagePolicy = matcher.policy;
      let compiled: CompiledAuthorities;
      let broken: string | undefined;
      try {
        compiled = await compileAuthorities(cip, {
          trustRoots: resolver,
          lookupSecret: (namespace, name) => secrets.get(`${namespace}/${name}`),
          systemNamespace: options.namespace,
        });
      } catch (error) {
        broken = (error as Error).message;
        problems.push({
          object: `ClusterImagePolicy/${matcher.name}`,
          ref: { apiVersion: cip.apiVersion, kind: cip.kind, name: matcher.name },
          message: broken,
          cause: error,
        });
        compiled = brokenAuthorities(matcher, broken);
      }
      const revision = `${cip.metadata.uid ?? cip.metadata.name}:${digestOf(cip.spec)}:${shared}`;
      const verify = { name: matcher.name, mode: matcher.mode, revision, compiled };
      return { ...matcher, verify, broken };
    }),
  );
  const set = policySet(records, { noMatchPolicy: objects.config.noMatchPolicy });
  const broken = new Map(
    records.flatMap((r) => (r.broken === undefined ? [] : [[r.name, r.broken] as const])),
  );
  return {
    snapshot: {
      set,
      config: objects.config,
      broken,
      loadedAt: options.now?.() ?? new Date(),
      checksFor: (decision, subject) => planChecks(decision, set, subject),
      match: (reference, subject) => matchPolicies(set, reference, subject),
    },
    problems,
  };
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
