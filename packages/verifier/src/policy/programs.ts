// The policies of a ClusterImagePolicy (`attestations[].policy`, `spec.policy`), compiled once
// per policy revision: `cel` (a Signet extension) in the CEL host of the compile context (worker
// threads in a server; the calling thread without one), `cue` and `rego` in the engines of the
// compile context, as policy-controller evaluates them. The source is `data`, a ConfigMap
// (`configMapRef`) or a `remote` URL pinned by `sha256sum`, exactly one of them (upstream's
// validation); a remote one is fetched here, never per admission.
import type { ConfigMapReference, Policy, RemotePolicy } from '@signet/k8s-types';
import { type CelEvaluator, type CelHost, DEFAULT_CEL_COST_LIMIT } from './cel-host.js';
import type { EngineLanguage, EngineProgram, PolicyEngineHost, RemotePolicyFetch } from './engines.js';
import { PolicyCompileError, type PolicySite } from './errors.js';

/** Reads a ConfigMap's `data`, or `undefined` when there is no such ConfigMap. */
export type ConfigMapLookup = (
  namespace: string,
  name: string,
) => Readonly<Record<string, string>> | undefined;

export interface ProgramContext {
  readonly lookupConfigMap: ConfigMapLookup | undefined;
  /** Namespace of a `configMapRef` without one. */
  readonly systemNamespace: string;
  readonly engines: PolicyEngineHost | undefined;
  /** Where CEL runs; the calling thread (under the same cost limit) without one. */
  readonly cel?: CelHost | undefined;
  readonly fetchRemote: RemotePolicyFetch | undefined;
  /** Check a `remote` source for form only, fetching nothing (see CompileContext.offline). */
  readonly offline?: boolean;
}

export type PolicyProgram = { readonly source: string } & (
  | { readonly language: 'cel'; readonly cel: CelEvaluator }
  | { readonly language: EngineLanguage; readonly engine: EngineProgram }
  /** A `remote` policy compiled offline: checked for form, never fetched, so never judged. */
  | { readonly language: 'cel' | EngineLanguage; readonly notFetched: string }
);

/** A program's verdict. `infrastructure`: the engine failed, nothing was judged. */
export type ProgramOutcome =
  | { readonly passed: true }
  | {
      readonly passed: false;
      readonly reason: string;
      readonly infrastructure: boolean;
      readonly cause?: unknown;
    };

/** What a program is evaluated over: Signet's CEL bindings, or the JSON document upstream gives CUE and Rego. */
export interface ProgramInputs {
  readonly cel: () => Readonly<Record<string, unknown>>;
  readonly document: () => unknown;
}

const LANGUAGES = ['cel', 'cue', 'rego'];
/** What an offline compile reads for a `remote` policy: nothing. */
const NOT_FETCHED = Symbol('not fetched');

/** Compiles `policy`. Throws {@link PolicyCompileError}. */
export async function compilePolicyProgram(
  policy: Policy,
  site: PolicySite,
  context: ProgramContext,
): Promise<PolicyProgram> {
  if (!LANGUAGES.includes(policy.type)) {
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_TYPE',
      { ...site, path: `${site.path}.type` },
      `policy type ${JSON.stringify(policy.type)} is not supported: only [cue,rego] (and Signet's cel) are`,
    );
  }
  const language = policy.type as PolicyProgram['language'];
  if (language !== 'cel' && context.engines === undefined) {
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_TYPE',
      site,
      `${language} policies need the policy engines (@signet/policy-engines), which this verifier was not given`,
    );
  }
  const source = await policySource(policy, site, context);
  if (source === NOT_FETCHED) {
    return { source: '', language, notFetched: (policy.remote as RemotePolicy).url as string };
  }
  if (language === 'cel')
    return { source, language, cel: await compileCelProgram(source, site, context.cel) };
  return { source, language, engine: await compileEngineProgram(language, source, site, context.engines) };
}

async function compileCelProgram(
  source: string,
  site: PolicySite,
  host: CelHost | undefined,
): Promise<CelEvaluator> {
  try {
    return await (host ?? (await callingThreadCel())).compile(source);
  } catch (error) {
    const invalid = error instanceof Error && error.name === 'CelSyntaxError';
    throw new PolicyCompileError(
      invalid ? 'INVALID_CEL' : 'POLICY_ENGINE_FAILED',
      site,
      invalid ? `CEL does not parse: ${error.message}` : `the CEL host failed: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

// The CEL engine (about 130 modules) is loaded by the first CEL policy, not at start-up.
async function callingThreadCel(): Promise<CelHost> {
  const { compileCel } = await import('./cel.js');
  return {
    async compile(source) {
      let program: ReturnType<typeof compileCel>;
      try {
        program = compileCel(source, { costLimit: DEFAULT_CEL_COST_LIMIT });
      } catch (error) {
        throw Object.assign(new Error((error as Error).message, { cause: error }), {
          name: 'CelSyntaxError',
        });
      }
      return { source, evaluate: async (bindings) => program.evaluate(bindings) };
    },
  };
}

async function compileEngineProgram(
  language: EngineLanguage,
  source: string,
  site: PolicySite,
  engines: PolicyEngineHost | undefined,
): Promise<EngineProgram> {
  try {
    return await (engines as PolicyEngineHost).compile(language, source);
  } catch (error) {
    const invalid = error instanceof Error && error.name === 'PolicySourceError';
    throw new PolicyCompileError(
      invalid ? 'INVALID_POLICY' : 'POLICY_ENGINE_FAILED',
      site,
      invalid
        ? `the ${language} policy does not compile: ${error.message}`
        : `the ${language} engine failed: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

async function policySource(
  policy: Policy,
  site: PolicySite,
  context: ProgramContext,
): Promise<string | typeof NOT_FETCHED> {
  const given = [
    policy.data !== undefined && policy.data !== '' && 'data',
    policy.configMapRef !== undefined && 'configMapRef',
    policy.remote !== undefined && 'remote',
  ].filter((field): field is string => field !== false);
  if (given.length !== 1) {
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_SOURCE',
      site,
      given.length === 0
        ? 'expected exactly one, got neither: data, configMapRef, remote'
        : `expected exactly one, got several: ${given.join(', ')}`,
    );
  }
  if (given[0] === 'data') return policy.data as string;
  if (given[0] === 'remote') return remoteSource(policy.remote as RemotePolicy, site, context);
  return configMapSource(policy.configMapRef as ConfigMapReference, site, context);
}

async function remoteSource(
  remote: RemotePolicy,
  site: PolicySite,
  context: ProgramContext,
): Promise<string | typeof NOT_FETCHED> {
  const at = { ...site, path: `${site.path}.remote` };
  let url: URL | undefined;
  try {
    url = new URL(remote.url ?? '');
  } catch {
    url = undefined;
  }
  if (url === undefined || url.protocol !== 'https:' || url.host === '') {
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_SOURCE',
      { ...at, path: `${at.path}.url` },
      `${JSON.stringify(remote.url ?? '')} is invalid: a host and the https scheme are expected`,
    );
  }
  const sha256 = (remote.sha256sum ?? '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(sha256)) {
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_SOURCE',
      { ...at, path: `${at.path}.sha256sum` },
      remote.sha256sum ? 'must be 64 hexadecimal digits' : 'missing field',
    );
  }
  if (context.offline === true) return NOT_FETCHED;
  if (context.fetchRemote === undefined) {
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_SOURCE',
      at,
      'remote policies need a fetcher, which this verifier was not given',
    );
  }
  try {
    return await context.fetchRemote(url.href, sha256);
  } catch (error) {
    throw new PolicyCompileError('REMOTE_POLICY_FAILED', at, (error as Error).message, { cause: error });
  }
}

function configMapSource(ref: ConfigMapReference, site: PolicySite, context: ProgramContext): string {
  const at = { ...site, path: `${site.path}.configMapRef` };
  if (!ref.name)
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_SOURCE',
      { ...at, path: `${at.path}.name` },
      'missing field',
    );
  if (!ref.key)
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_SOURCE',
      { ...at, path: `${at.path}.key` },
      'missing field',
    );
  if (context.lookupConfigMap === undefined) {
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_SOURCE',
      at,
      'configMapRef policies need a ConfigMap lookup',
    );
  }
  const namespace = ref.namespace || context.systemNamespace;
  const data = context.lookupConfigMap(namespace, ref.name);
  const value = data?.[ref.key];
  if (value === undefined) {
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_SOURCE',
      at,
      `ConfigMap ${namespace}/${ref.name} ${data === undefined ? 'not found' : `has no key ${JSON.stringify(ref.key)}`}`,
    );
  }
  return value;
}

/**
 * Evaluates `program`. `name` is what upstream names in its messages: the attestation's name, or
 * `ClusterImagePolicy` for the spec-level policy. A warning from a passing Rego policy fails it,
 * as in policy-controller (its validator refuses on a warning as on an error).
 */
export async function runProgram(
  program: PolicyProgram,
  name: string,
  inputs: ProgramInputs,
  signal?: AbortSignal,
): Promise<ProgramOutcome> {
  if ('notFetched' in program) {
    return {
      passed: false,
      reason: `the remote policy ${program.notFetched} was checked for form only and never fetched`,
      infrastructure: true,
    };
  }
  let outcome: Awaited<ReturnType<EngineProgram['evaluate']>>;
  try {
    if (program.language === 'cel') {
      // A cost limit that stops the expression is the policy's verdict; a host failure is not.
      const verdict = await program.cel.evaluate(inputs.cel(), signal);
      return verdict.passed ? verdict : { ...verdict, infrastructure: false };
    }
    outcome = await program.engine.evaluate(inputs.document());
  } catch (error) {
    // The error's message is the reason; only what lies beneath it is a cause.
    const reason = error instanceof Error ? error.message : String(error);
    const cause = error instanceof Error ? error.cause : undefined;
    return cause === undefined
      ? { passed: false, reason, infrastructure: true }
      : { passed: false, reason, infrastructure: true, cause };
  }
  if (outcome.passed && outcome.warning === undefined) return { passed: true };
  const detail = outcome.passed ? (outcome.warning as string) : outcome.reason;
  const wrapped =
    program.language === 'cue'
      ? `failed evaluating cue policy for ${name}: ${detail}`
      : outcome.passed
        ? detail
        : `failed evaluating rego policy for type ${name}: ${detail}`;
  return { passed: false, reason: wrapped, infrastructure: false };
}
