// `signet verify`: judges an image, or every workload of a manifest, by the webhook's own path: the
// mutating endpoint pins tags, the patch is applied as the API server would, then the validating
// endpoint decides. Nothing is sent to a cluster.
import type { Writable } from 'node:stream';
import { compileException, describeCause, exceptionState } from '@signet/core';
import type { AdmissionRequest, ImagePolicyException, KubeObject, PolicyMode } from '@signet/k8s-types';
import { type AuthorityCheck, type PolicyCheck, SIGNATURE_FORMATS } from '@signet/verifier';
import { stringify } from 'yaml';
import { type Admission, oneShotAdmission } from '../admission/assemble-admission.js';
import { createRequestFor, podRunning } from '../admission/create-request.js';
import { judgeCreate } from '../admission/judge-create.js';
import { type AuditResult, findingsOf, worstOf } from '../audit/findings.js';
import { readManifests, readStdin } from '../audit/manifests.js';
import type { Command } from '../cli/command.js';
import {
  CLOUD_CREDENTIALS_FLAG,
  DOCKER_CONFIG_FLAG,
  EXCEPTION_MAX_LIFETIME_FLAG,
  exceptionMaxLifetimeMs,
  filenameFlag,
  INSECURE_REGISTRY_FLAG,
  KMS_ENDPOINT_FLAG,
  namespaceFlag,
  outputFlag,
  outputFormat,
  PRIVATE_HOST_FLAG,
  policyFileFlag,
  REGISTRY_CA_FLAG,
  SIGNATURE_FORMAT_DEFAULT_FLAG,
  signatureFormatDefault,
} from '../cli/common-flags.js';
import { dockerCredentials } from '../cli/docker-credentials.js';
import type { FlagValues } from '../cli/flags.js';
import { InputError, UsageError } from '../errors.js';
import { parseGoDuration } from '../http/duration.js';
import type { VerifiedImage } from '../http/review.js';
import { createLogger } from '../logger.js';
import { SignetMetrics } from '../metrics.js';
import { WebhookPolicyEngines } from '../policy/policy-engines.js';
import { readPolicyFiles } from '../policy/policy-file.js';
import { registrySettingsFrom } from '../registry-settings.js';
import { RegistryProgress } from './registry-progress.js';

const OUTPUTS = ['text', 'json', 'yaml'] as const;

export const VERIFY_COMMAND: Command = {
  name: 'verify',
  summary:
    'signet verify: check an image, or the workloads of manifests, against policy YAML as the webhook would admit them (exit 0 admitted, 1 denied by policy, 3 could not be checked, 2 bad input).',
  synopsis: '(IMAGE | -f PATH...) --policy-file FILE... [flags]',
  positionals: true,
  flags: [
    policyFileFlag('ClusterImagePolicies, TrustRoots, ImagePolicies, exceptions, config, Secrets (YAML)'),
    filenameFlag('check every Pod, Deployment, ... as a CREATE'),
    outputFlag(OUTPUTS),
    namespaceFlag('namespace of objects that name none (and of IMAGE)', { default: 'default' }),
    INSECURE_REGISTRY_FLAG,
    PRIVATE_HOST_FLAG,
    REGISTRY_CA_FLAG,
    CLOUD_CREDENTIALS_FLAG,
    KMS_ENDPOINT_FLAG,
    DOCKER_CONFIG_FLAG,
    EXCEPTION_MAX_LIFETIME_FLAG,
    SIGNATURE_FORMAT_DEFAULT_FLAG,
    {
      name: 'timeout',
      type: 'string',
      value: 'DURATION',
      default: '30s',
      description: 'time allowed per object',
    },
  ],
  run: ({ positionals, values, stdout, stderr }) => runVerify(positionals, values, stdout, stderr),
};

interface VerifyValues {
  readonly 'policy-file'?: string[];
  readonly filename?: string[];
  readonly output?: string;
  readonly namespace?: string;
  readonly 'insecure-registry'?: string[];
  readonly 'private-host'?: string[];
  readonly 'kms-endpoint'?: string[];
  readonly 'registry-ca-file'?: string[];
  readonly 'cloud-credentials'?: string[];
  readonly 'docker-config'?: string;
  readonly timeout?: string;
  readonly 'exception-max-lifetime'?: string;
  readonly 'signature-format-default'?: string;
}

/** What `signet verify` concluded about one object. */
export interface ObjectReport {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly allowed: boolean;
  readonly rule: string;
  /** The deny message, one line per image, as the API server would show it. */
  readonly denials: readonly string[];
  readonly warnings: readonly string[];
  /** Image fields the mutating endpoint pinned: path -> pinned image. */
  readonly pinned: Readonly<Record<string, string>>;
  readonly images: readonly VerifiedImage[];
  /**
   * As `signet audit` says it: `fail` when an enforced policy is not satisfied, `infrastructure`
   * when it could not be checked (a registry down, a tag that could not be resolved), `warn`, `pass`.
   */
  readonly result: AuditResult;
  /** Tags the mutating endpoint could not pin, and why. */
  readonly unresolved: readonly UnresolvedTag[];
}

interface UnresolvedTag {
  readonly image: string;
  readonly reason: string;
}

/**
 * `signet verify IMAGE --policy-file FILE` or `signet verify -f PATH --policy-file FILE`: prints
 * per object the decision and per image and policy what was verified. Exit 0 when every object
 * would be admitted, 1 when one would be denied by policy, 3 when one would be denied only because
 * something could not be checked (the codes of `signet audit`).
 */
export async function runVerify(
  positionals: readonly string[],
  flags: FlagValues,
  out: Writable,
  err: Writable = process.stderr,
): Promise<number> {
  const values = flags as VerifyValues;
  const objects = await subjectsOf(positionals, values);
  const files = values['policy-file'] ?? [];
  if (files.length === 0) throw new UsageError('verify needs --policy-file FILE (ClusterImagePolicy YAML)');
  const output = outputFormat(values.output, OUTPUTS);
  const timeoutMs = parseGoDuration(values.timeout ?? '30s');
  if (timeoutMs === undefined)
    throw new UsageError(`--timeout must be a duration like 30s, got ${JSON.stringify(values.timeout)}`);
  const write = (line: string) => out.write(`${line}\n`);
  const namespace = values.namespace ?? 'default';
  // Policy warnings go with the text, and to stderr when stdout carries JSON.
  const toStderr = (line: string) => err.write(`${line}\n`);
  const note = output === 'text' ? write : toStderr;
  // Slow registries are reported on stderr while verify waits for them.
  const progress = new RegistryProgress(toStderr);
  const unresolved = new UnresolvedTags();
  const admission = await loadAdmission(files, namespace, values, note, progress, unresolved);
  const reports: ObjectReport[] = [];
  try {
    for (const object of objects) {
      const request = createRequestFor(object, { namespace });
      if (request === undefined) continue;
      reports.push(await judge(admission, request, timeoutMs, unresolved));
    }
  } finally {
    progress.stop();
  }
  const allowed = reports.every((r) => r.allowed);
  const document = { allowed, objects: reports.map(jsonReport) };
  if (output === 'json') write(JSON.stringify(document, null, 2));
  else if (output === 'yaml') write(stringify(document, { lineWidth: 0 }).trimEnd());
  else printText(reports, positionals.length > 0, write);
  return exitCodeOf(reports);
}

/** 1 when an object is denied by policy, else 3 when one is denied as not checkable, else 0. */
export function exitCodeOf(reports: readonly Pick<ObjectReport, 'allowed' | 'result'>[]): number {
  const denied = reports.filter((r) => !r.allowed);
  if (denied.some((r) => r.result !== 'infrastructure')) return 1;
  return denied.length > 0 ? 3 : 0;
}

/** Why the mutating endpoint could not pin a tag, as it reports it, kept per review. */
class UnresolvedTags {
  #current: UnresolvedTag[] = [];

  readonly record = (image: string, error: unknown): void => {
    this.#current.push({ image, reason: describeCause(error) });
  };

  /** What was recorded since the last call. */
  take(): UnresolvedTag[] {
    const taken = this.#current;
    this.#current = [];
    return taken;
  }
}

async function subjectsOf(positionals: readonly string[], values: VerifyValues): Promise<KubeObject[]> {
  const [image, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError('verify takes one IMAGE');
  const paths = values.filename ?? [];
  if ((image === undefined) === (paths.length === 0))
    throw new UsageError('verify takes either an IMAGE or -f PATH');
  if (image !== undefined) return [podRunning(image, values.namespace ?? 'default')];
  const objects = await readManifests(paths, readStdin);
  if (objects.length === 0) throw new InputError(`${paths.join(', ')}: no objects`);
  return objects;
}

async function loadAdmission(
  files: readonly string[],
  namespace: string,
  values: VerifyValues,
  note: (line: string) => void,
  progress: RegistryProgress,
  unresolved: UnresolvedTags,
): Promise<Admission> {
  const registries = registrySettingsFrom(values);
  const objects = await readPolicyFiles(files, namespace);
  const maxExceptionLifetimeMs = exceptionMaxLifetimeMs(values['exception-max-lifetime']);
  const formats = SIGNATURE_FORMATS.withDefaults(signatureFormatDefault(values['signature-format-default']));
  for (const line of idleExceptions(objects.exceptions, maxExceptionLifetimeMs)) note(`warning: ${line}`);
  const keychain = dockerCredentials(values['docker-config']);
  const logger = createLogger({ level: 'silent' });
  return oneShotAdmission(objects, {
    logger,
    metrics: new SignetMetrics({ defaultMetrics: false }),
    namespace,
    maxExceptionLifetimeMs,
    formats,
    // Their worker threads do not keep the process alive once the command is done.
    engines: new WebhookPolicyEngines(logger),
    onProblem: (problem) => note(`warning: ${problem.object}: ${problem.message}`),
    insecureRegistries: registries.insecureRegistries,
    registries,
    registryFetch: progress.wrap(),
    resolveDigests: true,
    onUnresolvedTag: unresolved.record,
    ...(keychain ? { credentials: keychain } : {}),
  });
}

/** The exceptions of the files that apply to nothing now: expired, or meant to live too long. */
function idleExceptions(exceptions: readonly ImagePolicyException[], maxLifetimeMs: number): string[] {
  const now = Date.now();
  return exceptions.flatMap((exception) => {
    const state = exceptionState(compileException(exception), now, maxLifetimeMs);
    const label = `ImagePolicyException/${exception.metadata.namespace}/${exception.metadata.name}`;
    if (state === 'expired') return [`${label}: expired at ${exception.spec.expires}; it applies to nothing`];
    if (state === 'too-long')
      return [
        `${label}: expires ${exception.spec.expires}, later than --exception-max-lifetime allows; it applies to nothing`,
      ];
    return [];
  });
}

/** Mutate, apply the patch, validate: what the API server does with a CREATE. */
async function judge(
  admission: Admission,
  request: AdmissionRequest,
  timeoutMs: number,
  unresolved: UnresolvedTags,
): Promise<ObjectReport> {
  const judgement = await judgeCreate(admission.service, request, timeoutMs);
  const { pinned, validated } = judgement;
  const message = validated.response.status?.message;
  return {
    kind: request.kind.kind,
    namespace: request.namespace ?? '',
    name: request.name ?? '',
    allowed: validated.response.allowed,
    rule: validated.rule,
    denials: validated.response.allowed || message === undefined ? [] : message.split('\n'),
    warnings: validated.response.warnings ?? [],
    pinned,
    images: validated.verifications ?? [],
    result: worstOf(findingsOf(judgement).map((f) => f.result)),
    unresolved: unresolved.take(),
  };
}

/**
 * Per object: what was pinned, per image and policy what was verified, then the denials no image
 * above explains, then the decision. Each cause is said once: the webhook's deny line for an image
 * repeats its policy's failure, so it is printed only for images without a verification to show
 * (no policy matched, an invalid reference, a tag that could not be pinned); `--output json` has
 * every deny line as the API server would show it.
 */
function printText(reports: readonly ObjectReport[], single: boolean, write: (line: string) => void): void {
  for (const report of reports) {
    if (!single) write(`${report.kind} ${report.namespace}/${report.name}`);
    for (const line of reportLines(report)) write(line);
  }
}

function reportLines(report: ObjectReport): string[] {
  const lines = Object.entries(report.pinned).map(([path, image]) => `  pinned ${path} to ${image}`);
  for (const tag of report.unresolved) lines.push(`  cannot pin ${tag.image} to a digest: ${tag.reason}`);
  for (const image of report.images) lines.push(...describeImage(image));
  const explained = report.images.map((i) => `${i.verdict.path} ${i.verdict.image}:`);
  const unexplained = report.denials.filter((line) => !explained.some((prefix) => line.startsWith(prefix)));
  lines.push(...unexplained.map((line) => `  denied: ${line}`));
  lines.push(...report.warnings.map((line) => `  warning: ${line}`));
  lines.push(decisionLine(report));
  return lines;
}

function decisionLine(report: ObjectReport): string {
  if (report.allowed) return 'ADMITTED';
  return report.result === 'infrastructure' ? 'DENIED (could not be checked)' : 'DENIED';
}

function describeImage(image: VerifiedImage): string[] {
  const { verdict, digest } = image;
  const heading = `${verdict.image}${digest && !verdict.image.includes('@') ? ` (${digest})` : ''}`;
  const modes = modesOf(image);
  return [heading, ...image.checks.flatMap((check, index) => describeCheck(check, modes[index]))];
}

/** Each check's mode: core's verdict joined the checks, in their order, with the policies' records. */
function modesOf(image: VerifiedImage): readonly (PolicyMode | undefined)[] {
  const { outcome } = image.verdict;
  return outcome.kind === 'policies' ? outcome.verdicts.map((verdict) => verdict.mode) : [];
}

function describeCheck(check: PolicyCheck, mode: PolicyMode | undefined): string[] {
  const lines = [`${check.passed ? 'PASS' : 'FAIL'} policy "${check.policy}" (${mode})`];
  const authorities = check.authorities.map(
    (authority) => `  authority "${authority.authority}": ${describeAuthority(authority)}`,
  );
  if (!check.passed) {
    // The policy's failure is often its one authority's: said by the authority line alone.
    const failure = `${check.failure.reason}${causeText(check.failure)}`;
    if (!authorities.some((line) => line.endsWith(`fail: ${failure}`)))
      lines.push(`  ${check.failure.kind} failure: ${failure}`);
  }
  return [...lines, ...authorities];
}

function describeAuthority(authority: AuthorityCheck): string {
  if (!authority.passed) return `fail: ${authority.failure.reason}${causeText(authority.failure)}`;
  if (authority.static) return 'pass (static)';
  const signer = authority.signer;
  const who =
    signer === undefined
      ? 'nobody'
      : signer.type === 'key'
        ? `key ${signer.name} (${signer.fingerprint})`
        : `${signer.issuer} ${signer.subject}`;
  return `pass, ${authority.counts.verified} of ${authority.counts.found} verified, signed by ${who}`;
}

function causeText(failure: { readonly cause?: unknown }): string {
  return failure.cause === undefined ? '' : ` (${describeCause(failure.cause)})`;
}

/** The JSON form: reasons as text (causes described), signers and counts per authority. */
function jsonReport(report: ObjectReport) {
  return {
    ...report,
    images: report.images.map((image) => ({
      path: image.verdict.path,
      image: image.verdict.image,
      digest: image.digest ?? null,
      policies: image.checks.map((check, index) => ({
        policy: check.policy,
        mode: modesOf(image)[index],
        passed: check.passed,
        ...(check.passed ? {} : { failure: failureJson(check.failure) }),
        authorities: check.authorities.map((a) =>
          a.passed
            ? { authority: a.authority, passed: true, counts: a.counts, signer: a.signer ?? null }
            : { authority: a.authority, passed: false, counts: a.counts, failure: failureJson(a.failure) },
        ),
      })),
    })),
  };
}

function failureJson(failure: { kind: string; reason: string; cause?: unknown }) {
  return {
    kind: failure.kind,
    reason: failure.reason,
    ...(failure.cause === undefined ? {} : { cause: describeCause(failure.cause) }),
  };
}
