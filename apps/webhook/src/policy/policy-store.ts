import type { AdmissionDecision, ImageReference } from '@signet/core';
import {
  type CompiledException,
  type CompiledPolicy,
  compileException,
  compilePolicy,
  type ImageCheck,
  InvalidPolicyError,
  type MatchSubject,
  matchPolicies,
  type PlanOptions,
  type PolicyMatch,
  type PolicySet,
  planChecks,
  policySet,
} from '@signet/core';
import type { ClusterImagePolicy, ImagePolicy, PolicyControllerConfig } from '@signet/k8s-types';
import {
  type CelHost,
  type CompileContext,
  type CompiledAuthorities,
  compileAuthorities,
  compileImagePolicyAuthorities,
  type KmsKeySource,
  type LivingTrustRoot,
  PolicyCompileError,
  type PolicyEngineHost,
  type RemotePolicyFetch,
  type RemoteTrustRoots,
  SIGNATURE_FORMATS,
  type SignatureFormats,
  TrustRootError,
  type TrustRootOptions,
  type TrustRootResolver,
  trustRootResolver,
} from '@signet/verifier';
import { version } from '../version.js';
import { type FingerprintInputs, PolicyReads, policyFingerprint, recordingContext } from './fingerprint.js';
import type { PolicyObjects, PolicyProblem, UnreadablePolicy } from './policy-objects.js';
import { staleIfErrorOf } from './stale-if-error-annotation.js';

/**
 * One ClusterImagePolicy or ImagePolicy, compiled once per change: core's record (name, globs,
 * match selectors, mode) extended with the verifier's compiled policy (authorities, revision), so
 * that a verifier result is joined with the record it was asked for, never looked up by name.
 */
export interface SnapshotPolicy extends CompiledPolicy {
  /**
   * The policy as the verifier takes it: its compiled authorities, and the revision of its passes
   * (the fingerprint of what the compile read, `policyFingerprint`).
   */
  readonly compiled: CompiledAuthorities;
  /** Why the policy cannot be enforced as written; it then denies what it matches, saying so. */
  readonly broken: string | undefined;
  /**
   * What kind of problem `broken` is: the object does not parse, it cannot compile as written, or
   * it failed for a reason that may pass (a remote policy, an engine) and is compiled again later.
   */
  readonly brokenKind: 'unreadable' | 'invalid' | 'passing' | undefined;
  /** The `metadata.generation` that was compiled (for `status.observedGeneration`). */
  readonly generation: number | undefined;
  /**
   * How long a verification record may admit an image this policy cannot verify now for an
   * infrastructure reason (stale-if-error): the `signet.dev/stale-if-error` annotation, else
   * `undefined` (the server's default applies). 0 turns it off for this policy.
   */
  readonly staleIfErrorMs: number | undefined;
}

/** Whether a TrustRoot can be used: `undefined` when it loaded, else why not. */
export interface TrustRootState {
  readonly generation: number | undefined;
  /** The form it takes: sigstoreKeys, remote (TUF mirror) or repository (embedded TUF). */
  readonly form: 'sigstore-keys' | 'remote' | 'repository' | 'unknown';
  readonly problem: { readonly message: string; readonly passing: boolean } | undefined;
}

/** Everything an admission needs about policies, compiled once per change and swapped atomically. */
export interface PolicySnapshot {
  /** The policies, sorted by name, as core matches them (with the no-match policy). */
  readonly policySet: PolicySet<SnapshotPolicy>;
  readonly config: PolicyControllerConfig;
  /** Policies that exist but cannot be enforced as written: they deny what they match. */
  readonly broken: ReadonlyMap<string, string>;
  /** Every TrustRoot object by name, parsed or not, and whether it loads. */
  readonly trustRoots: ReadonlyMap<string, TrustRootState>;
  /**
   * ImagePolicyExceptions that apply to nothing because they do not parse or compile, by
   * `namespace/name`, with why (for their status).
   */
  readonly unusableExceptions: ReadonlyMap<string, UnusableException>;
  readonly loadedAt: Date;
  /** What must be verified for a decision, each image with the records of the policies it must pass. */
  checksFor(
    decision: AdmissionDecision,
    subject: MatchSubject,
    options?: PlanOptions,
  ): ImageCheck<SnapshotPolicy>[];
  /** The policies one image must pass in the context of `subject`, exceptions valid at `now` removed. */
  match(reference: ImageReference, subject: MatchSubject, now?: number): PolicyMatch<SnapshotPolicy>;
}

/** An ImagePolicyException that applies to nothing as written, and why. */
export interface UnusableException {
  readonly message: string;
  readonly generation: number | undefined;
}

export interface CompileOptions {
  /** The webhook's namespace: `secretRef`s without a namespace are read here. */
  readonly namespace: string;
  readonly trust?: TrustRootOptions;
  /** Public keys of `key.kms` authorities; without it, such policies are broken. */
  readonly kmsKeys?: KmsKeySource;
  /** The default trust root kept current through TUF (`--tuf-mirror`); the embedded one without it. */
  readonly defaultRoot?: LivingTrustRoot;
  /** `remote` TrustRoots kept across compiles and refreshed on a schedule. */
  readonly remoteRoots?: RemoteTrustRoots;
  /** Signet's version, part of every policy's fingerprint (verification may differ between versions). */
  readonly signetVersion?: string;
  readonly now?: () => Date;
  /** CUE and Rego; without them such policies are broken (they deny what they match). */
  readonly engines?: PolicyEngineHost;
  /** Where CEL runs (worker threads in a server); the calling thread without it. */
  readonly cel?: CelHost;
  /**
   * No network I/O (apply-time validation): KMS keys, `remote` TrustRoots and remote policies are
   * checked for form only. Such a snapshot says what compiles; it is never installed.
   */
  readonly offline?: boolean;
  /** `policy.remote`; without it such policies are broken. */
  readonly fetchRemotePolicy?: RemotePolicyFetch;
  /**
   * Load every TrustRoot, used or not, for its status (default true). The policy webhook checks
   * one policy and loads only the TrustRoots it uses.
   */
  readonly loadAllTrustRoots?: boolean;
  /** The longest an ImagePolicyException may live, creation to expiry (default 30 days). */
  readonly maxExceptionLifetimeMs?: number;
  /** What authorities may name in `signatureFormat`, and read without it (default `SIGNATURE_FORMATS`). */
  readonly formats?: SignatureFormats;
}

export interface CompileResult {
  /** `undefined` when the set as a whole cannot be used (the previous snapshot stays). */
  readonly snapshot: PolicySnapshot | undefined;
  readonly problems: readonly PolicyProblem[];
  /**
   * A policy is broken for a reason that may pass (a remote policy could not be fetched, an engine
   * failed): compile the same objects again later.
   */
  readonly retry: boolean;
}

const PASSING_CODES: ReadonlySet<string> = new Set(['REMOTE_POLICY_FAILED', 'POLICY_ENGINE_FAILED']);

/** A policy that cannot be enforced denies everything it matches, saying why. */
function brokenAuthorities(policy: CompiledPolicy, problem: string, revision: string): CompiledAuthorities {
  return {
    policy: policy.name,
    revision,
    authorities: [
      {
        type: 'static',
        action: 'fail',
        message: `policy cannot be enforced: ${problem}`,
        name: 'policy-error',
        index: 0,
        sources: [],
        attestations: [],
      },
    ],
    specPolicy: undefined,
  };
}

/** A policy as core will match it, and why it cannot be enforced as written, if it cannot. */
interface Matcher {
  readonly matcher: CompiledPolicy;
  readonly broken: string | undefined;
}

type AnyPolicy = ClusterImagePolicy | ImagePolicy;

/** A stand-in for a policy that does not parse, matching what it may have matched. */
function placeholderOf(policy: UnreadablePolicy): AnyPolicy {
  const metadata = {
    name: policy.name,
    ...(policy.generation === undefined ? {} : { generation: policy.generation }),
  };
  const images = (policy.globs ?? ['**']).map((glob) => ({ glob }));
  if (policy.kind === 'ImagePolicy') {
    return {
      apiVersion: 'policy.signet.dev/v1alpha1',
      kind: 'ImagePolicy',
      metadata: { ...metadata, namespace: policy.namespace ?? '' },
      spec: { images, authorities: [] },
    };
  }
  return {
    apiVersion:
      policy.apiVersion === 'policy.sigstore.dev/v1alpha1'
        ? policy.apiVersion
        : 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata,
    spec: { images, authorities: [], mode: policy.mode },
  };
}

/** `policy` without its `match` entries, and matching every image when `everyImage`. */
function broadened(policy: AnyPolicy, everyImage: boolean): AnyPolicy {
  const images = everyImage ? [{ glob: '**' }] : policy.spec.images;
  if (policy.kind === 'ImagePolicy') {
    const { match: _match, ...spec } = policy.spec;
    return { ...policy, spec: { ...spec, images } };
  }
  const { match: _match, ...spec } = policy.spec;
  return { ...policy, spec: { ...spec, images } };
}

/** How problems and Events name a policy. */
function problemAbout(policy: AnyPolicy): Pick<PolicyProblem, 'object' | 'ref'> {
  const { name } = policy.metadata;
  if (policy.kind === 'ImagePolicy') {
    const { namespace } = policy.metadata;
    return {
      object: `ImagePolicy/${namespace}/${name}`,
      ref: { apiVersion: policy.apiVersion, kind: policy.kind, name, namespace },
    };
  }
  return {
    object: `ClusterImagePolicy/${name}`,
    ref: { apiVersion: policy.apiVersion, kind: policy.kind, name },
  };
}

/**
 * Core's matcher for `policy`. A policy whose globs or selectors are invalid still guards what it
 * may have matched: its valid globs without the selectors, or every image when a glob is invalid.
 */
function matcherOf(policy: AnyPolicy, broken: string | undefined, problems: PolicyProblem[]): Matcher {
  try {
    return { matcher: compilePolicy(policy), broken };
  } catch (error) {
    if (!(error instanceof InvalidPolicyError)) throw error;
    problems.push({ ...problemAbout(policy), message: error.message, cause: error });
    for (const everyImage of [false, true]) {
      try {
        return { matcher: compilePolicy(broadened(policy, everyImage)), broken: broken ?? error.message };
      } catch {
        // an invalid glob: fall back to matching every image
      }
    }
    throw error;
  }
}

/** One policy's record: its authorities compiled, or why it cannot be enforced. */
async function compileRecord(
  { matcher, broken: unusable }: Matcher,
  unusableKind: 'unreadable' | 'invalid',
  base: CompileContext,
  fingerprinting: Omit<FingerprintInputs, 'policy' | 'reads'>,
): Promise<{ record: SnapshotPolicy; problem?: PolicyProblem; retry: boolean }> {
  const source = matcher.policy;
  // What this policy's compile reads goes into its fingerprint (the revision of its passes).
  const reads = new PolicyReads();
  const revision = () => policyFingerprint({ ...fingerprinting, policy: source, reads });
  const context: CompileContext = { ...recordingContext(base, reads), revision };
  const record = (
    compiled: CompiledAuthorities,
    broken: string | undefined,
    brokenKind: SnapshotPolicy['brokenKind'],
  ): SnapshotPolicy => ({
    ...matcher,
    compiled,
    broken,
    brokenKind,
    generation: source.metadata.generation,
    staleIfErrorMs: staleIfErrorOf(source),
  });
  const broken = (problem: string) => brokenAuthorities(matcher, problem, revision());
  if (unusable !== undefined) {
    return { record: record(broken(unusable), unusable, unusableKind), retry: false };
  }
  try {
    const compiled =
      source.kind === 'ImagePolicy'
        ? await compileImagePolicyAuthorities(source, context)
        : await compileAuthorities(source, context);
    return { record: record(compiled, undefined, undefined), retry: false };
  } catch (error) {
    const passing = error instanceof PolicyCompileError && PASSING_CODES.has(error.code);
    const problem = (error as Error).message;
    return {
      record: record(broken(problem), problem, passing ? 'passing' : 'invalid'),
      problem: {
        ...problemAbout(source),
        message: problem,
        cause: error,
        ...(source.metadata.generation === undefined ? {} : { generation: source.metadata.generation }),
      },
      retry: passing,
    };
  }
}

/** The exceptions that compile; one with an invalid glob is reported and applies to nothing. */
function compileExceptions(objects: PolicyObjects, problems: PolicyProblem[]): CompiledException[] {
  return objects.exceptions.flatMap((exception) => {
    try {
      return [compileException(exception)];
    } catch (error) {
      if (!(error instanceof InvalidPolicyError)) throw error;
      const { name, namespace } = exception.metadata;
      problems.push({
        object: `ImagePolicyException/${namespace}/${name}`,
        ref: { apiVersion: exception.apiVersion, kind: exception.kind, name, namespace },
        message: error.message,
        cause: error,
        ...(exception.metadata.generation === undefined ? {} : { generation: exception.metadata.generation }),
      });
      return [];
    }
  });
}

/**
 * Compiles policy objects into a snapshot: per policy core's matcher (globs, match selectors) and
 * the verifier's compiled authorities (keys, trust roots, CEL, CUE, Rego). No policy ever disappears, since its
 * images could then fall through to the no-match policy: one that does not parse, or whose globs,
 * selectors or authorities cannot be compiled (a KMS key, a bad key, a CUE or Rego policy that does not compile, a remote one that cannot be fetched), stays
 * in the set and denies what it may have matched with the reason (in its mode).
 */
export async function compileSnapshot(
  objects: PolicyObjects,
  options: CompileOptions,
): Promise<CompileResult> {
  const problems: PolicyProblem[] = [...objects.problems];
  const matchers = [
    ...objects.policies.map((cip) => matcherOf(cip, undefined, problems)),
    ...objects.imagePolicies.map((policy) => matcherOf(policy, undefined, problems)),
    ...objects.unreadable.map((policy) =>
      matcherOf(placeholderOf(policy), `cannot be parsed: ${policy.reason}`, problems),
    ),
  ];
  const exceptions = compileExceptions(objects, problems);
  const secrets = new Map(objects.secrets.map((s) => [`${s.namespace}/${s.name}`, s.data]));
  const configMaps = new Map(objects.configMaps.map((c) => [`${c.namespace}/${c.name}`, c.data]));
  const resolver = trustRootResolver(objects.trustRoots, {
    ...options.trust,
    ...(options.offline ? { offline: true } : {}),
    ...(options.defaultRoot ? { defaultRoot: options.defaultRoot } : {}),
    ...(options.remoteRoots ? { remoteRoots: options.remoteRoots } : {}),
  });
  const unreadable = new Set(
    objects.unreadable.map((policy) =>
      policy.kind === 'ImagePolicy' ? `${policy.namespace}/${policy.name}` : policy.name,
    ),
  );
  const context: CompileContext = {
    trustRoots: resolver,
    lookupSecret: (namespace, name) => secrets.get(`${namespace}/${name}`),
    lookupConfigMap: (namespace, name) => configMaps.get(`${namespace}/${name}`),
    systemNamespace: options.namespace,
    ...(options.engines ? { engines: options.engines } : {}),
    ...(options.cel ? { cel: options.cel } : {}),
    ...(options.offline ? { offline: true } : {}),
    ...(options.fetchRemotePolicy ? { fetchRemotePolicy: options.fetchRemotePolicy } : {}),
    ...(options.kmsKeys ? { kmsKeys: options.kmsKeys } : {}),
    ...(options.formats ? { formats: options.formats } : {}),
    enableOCI11: objects.config.enableOCI11,
  };
  const compiledRecords = await Promise.all(
    matchers.map((m) =>
      compileRecord(m, unreadable.has(m.matcher.name) ? 'unreadable' : 'invalid', context, {
        signet: options.signetVersion ?? version(),
        config: objects.config,
        formats: (options.formats ?? SIGNATURE_FORMATS).defaults,
      }),
    ),
  );
  const records = compiledRecords.map((r) => r.record);
  problems.push(...compiledRecords.flatMap((r) => (r.problem ? [r.problem] : [])));
  const retry = compiledRecords.some((r) => r.retry);
  const trustRoots =
    options.loadAllTrustRoots === false
      ? new Map<string, TrustRootState>()
      : await trustRootStates(objects, resolver);
  const set = policySet(records, {
    noMatchPolicy: objects.config.noMatchPolicy,
    exceptions,
    ...(options.maxExceptionLifetimeMs === undefined
      ? {}
      : { maxExceptionLifetimeMs: options.maxExceptionLifetimeMs }),
  });
  const broken = new Map(
    [...set.policies, ...[...set.namespaced.values()].flat()].flatMap((r) =>
      r.broken === undefined ? [] : [[r.name, r.broken] as const],
    ),
  );
  return {
    snapshot: {
      policySet: set,
      config: objects.config,
      broken,
      trustRoots,
      unusableExceptions: unusableExceptions(problems),
      loadedAt: options.now?.() ?? new Date(),
      checksFor: (decision, subject, plan) => planChecks(decision, set, subject, plan),
      match: (reference, subject, now) => matchPolicies(set, reference, subject, now),
    },
    problems,
    retry,
  };
}

/** The exceptions the problems are about (they do not parse, or their globs do not compile). */
function unusableExceptions(problems: readonly PolicyProblem[]): Map<string, UnusableException> {
  const unusable = new Map<string, UnusableException>();
  for (const { ref, message, generation } of problems) {
    if (ref?.kind !== 'ImagePolicyException' || ref.namespace === undefined) continue;
    unusable.set(`${ref.namespace}/${ref.name}`, { message, generation });
  }
  return unusable;
}

/**
 * Loads every TrustRoot through the resolver the policies used (memoized: a TrustRoot a policy
 * references is loaded once), so that each one's status says whether it works, used or not.
 * TrustRoots that did not parse are listed with the parse problem.
 */
async function trustRootStates(
  objects: PolicyObjects,
  resolver: TrustRootResolver,
): Promise<ReadonlyMap<string, TrustRootState>> {
  const states = new Map<string, TrustRootState>();
  for (const problem of objects.problems) {
    if (problem.ref?.kind !== 'TrustRoot') continue;
    states.set(problem.ref.name, {
      generation: problem.generation,
      form: 'unknown',
      problem: { message: `cannot be parsed: ${problem.message}`, passing: false },
    });
  }
  await Promise.all(
    objects.trustRoots.map(async (root) => {
      const { sigstoreKeys, remote } = root.spec;
      const form =
        sigstoreKeys !== undefined ? 'sigstore-keys' : remote !== undefined ? 'remote' : 'repository';
      let problem: TrustRootState['problem'];
      try {
        await resolver(root.metadata.name);
      } catch (error) {
        const passing = error instanceof TrustRootError && error.code === 'TRUST_ROOT_UNAVAILABLE';
        // Offline, a `remote` TrustRoot whose form is right is not loaded: nothing to report.
        const unfetched = error instanceof TrustRootError && error.code === 'TRUST_ROOT_NOT_FETCHED';
        if (!unfetched)
          problem = { message: error instanceof Error ? error.message : String(error), passing };
      }
      states.set(root.metadata.name, { generation: root.metadata.generation, form, problem });
    }),
  );
  return states;
}

/** Holds the current snapshot; readers always see one whole snapshot, never a mix. */
export class PolicyStore {
  #current: PolicySnapshot | undefined;
  #version = 0;

  get current(): PolicySnapshot | undefined {
    return this.#current;
  }

  /** The number of the newest compile started. */
  get version(): number {
    return this.#version;
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
