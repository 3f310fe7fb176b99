// The policy lifecycle: each new view of the policy objects (a file, or the cluster's watches) is
// compiled and installed atomically; what cannot be used is reported in the log, as metrics and,
// on a cluster, as Events on the object. `signet serve` applies every view it sees; `signet verify`
// and `signet audit` apply one, once. A view with a policy broken for a passing reason (a
// remote policy that could not be fetched, an engine failure) is compiled again a minute later,
// unless a newer view came first: remote policies are fetched on that schedule, never per
// admission.
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';
import type { WebhookPolicyEngines } from './policy-engines.js';
import type { ObjectRef, PolicyObjects, PolicyProblem } from './policy-objects.js';
import {
  type CompileOptions,
  compileSnapshot,
  type PolicySnapshot,
  type PolicyStore,
} from './policy-store.js';

/** Where problems with policy objects are reported on a cluster (Kubernetes Events). */
export interface PolicyProblemReporter {
  warn(object: ObjectRef, reason: string, message: string): Promise<void>;
}

export interface PolicyApplierOptions {
  readonly store: PolicyStore;
  readonly compile: CompileOptions;
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
  /** Absent when policies come from files. */
  readonly events?: PolicyProblemReporter;
  /**
   * The CUE and Rego engines: each compile is a session of theirs, installed with its snapshot
   * or discarded, so that they keep only what the snapshots in use need.
   */
  readonly engines?: WebhookPolicyEngines;
  /** How long until a view with a passing problem is compiled again. */
  readonly retryAfterMs?: number;
  /** False: a view is compiled once, never again later (the one-shot commands judge what they compiled). */
  readonly retryPassing?: boolean;
  /** Told each problem besides the log (the one-shot commands print them as warnings). */
  readonly onProblem?: (problem: PolicyProblem) => void;
  /** Told each snapshot installed (status reporting). */
  readonly onInstalled?: (snapshot: PolicySnapshot) => void;
}

export const RETRY_BROKEN_MS = 60_000;

const REPORTED_KINDS: ReadonlySet<string> = new Set([
  'ClusterImagePolicy',
  'TrustRoot',
  'ImagePolicy',
  'ImagePolicyException',
]);

/** Returns the function to call with every new view of the policy objects. */
export function policyApplier(options: PolicyApplierOptions): (objects: PolicyObjects) => Promise<void> {
  const { store, logger, metrics, events } = options;
  let retry: NodeJS.Timeout | undefined;
  const apply = async (objects: PolicyObjects): Promise<void> => {
    clearTimeout(retry);
    const version = store.begin();
    const session = engineSession(options.engines, options.compile);
    const { snapshot, problems, retry: again } = await compileSnapshot(objects, session.compile);
    if (again && options.retryPassing !== false && version === store.version) {
      retry = setTimeout(() => void apply(objects), options.retryAfterMs ?? RETRY_BROKEN_MS);
      retry.unref();
    }
    for (const problem of problems) {
      report(problem, logger, events);
      options.onProblem?.(problem);
    }
    if (snapshot === undefined) {
      session.end(false);
      logger.error(
        store.current
          ? 'the new policies cannot be used; keeping the previous ones'
          : 'no usable policies yet; not ready',
      );
      return;
    }
    const current = store.install(version, snapshot);
    session.end(current);
    if (current) {
      installed(snapshot, logger, metrics);
      options.onInstalled?.(snapshot);
    }
  };
  return apply;
}

/** One compile as a session of the engines (none without them), ended installed or discarded. */
function engineSession(engines: WebhookPolicyEngines | undefined, compile: CompileOptions) {
  const session = engines?.session();
  return {
    compile: session === undefined ? compile : { ...compile, engines: session },
    end(installed: boolean): void {
      if (session === undefined) return;
      if (installed) engines?.installed(session);
      else engines?.discard(session);
    },
  };
}

function report(problem: PolicyProblem, logger: Logger, events: PolicyProblemReporter | undefined): void {
  logger.error({ object: problem.object, err: problem.cause }, `policy problem: ${problem.message}`);
  if (events && problem.ref && REPORTED_KINDS.has(problem.ref.kind)) {
    void events.warn(problem.ref, 'InvalidPolicy', problem.message);
  }
}

function installed(snapshot: PolicySnapshot, logger: Logger, metrics: SignetMetrics): void {
  // ClusterImagePolicies, then each namespace's ImagePolicies (`namespace/name`).
  const policies = [...snapshot.policySet.policies, ...[...snapshot.policySet.namespaced.values()].flat()];
  metrics.policies.set({ state: 'active' }, policies.length - snapshot.broken.size);
  metrics.policies.set({ state: 'invalid' }, snapshot.broken.size);
  logger.info(
    {
      policies: policies.map((p) => p.name),
      exceptions: [...snapshot.policySet.exceptions.values()].flat().map((e) => e.name),
      broken: [...snapshot.broken.keys()],
      noMatchPolicy: snapshot.config.noMatchPolicy,
    },
    'policies loaded',
  );
}
