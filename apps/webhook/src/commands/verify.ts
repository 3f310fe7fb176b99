// `signet verify`: judges an image, or every workload of a manifest, by the webhook's own path: the
// mutating endpoint pins tags, the patch is applied as the API server would, then the validating
// endpoint decides. Nothing is sent to a cluster.
import { readFile } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { describeCause } from '@signet/core';
import type { AdmissionRequest, KubeObject } from '@signet/k8s-types';
import type { AuthorityCheck, ImageVerification, PolicyCheck } from '@signet/verifier';
import { createRequestFor, podRunning } from '../admission/create-request.js';
import { judgeCreate } from '../admission/judge-create.js';
import { manifestObjects, readStdin } from '../audit/manifests.js';
import {
  CLOUD_CREDENTIALS_FLAG,
  DOCKER_CONFIG_FLAG,
  INSECURE_REGISTRY_FLAG,
  KMS_ENDPOINT_FLAG,
  PRIVATE_HOST_FLAG,
  policyFileFlag,
  REGISTRY_CA_FLAG,
} from '../cli/common-flags.js';
import { dockerCredentials } from '../cli/docker-credentials.js';
import type { CommandSpec, FlagValues } from '../cli/flags.js';
import { InputError, UsageError } from '../errors.js';
import { parseGoDuration } from '../http/duration.js';
import { createLogger } from '../logger.js';
import { SignetMetrics } from '../metrics.js';
import { kmsKeyStore, remotePolicies, remoteTrustRoots } from '../outbound.js';
import { WebhookPolicyEngines } from '../policy/policy-engines.js';
import { loadPolicyFile, requireUsablePolicyFiles } from '../policy/policy-file.js';
import { mergePolicyObjects } from '../policy/policy-objects.js';
import { compileSnapshot } from '../policy/policy-store.js';
import { registrySettingsFrom } from '../registry-settings.js';
import { type Admission, assembleAdmission } from '../signet.js';
import { RegistryProgress } from './registry-progress.js';

export const VERIFY_COMMAND: CommandSpec = {
  name: 'verify',
  summary:
    'signet verify: check an image, or the workloads of a manifest, against policy YAML as the webhook would admit them (exit 0 admitted, 1 denied, 2 bad input).',
  synopsis: '(IMAGE | --resource FILE) --policy-file FILE... [flags]',
  positionals: true,
  flags: [
    policyFileFlag('ClusterImagePolicies, TrustRoots, the config ConfigMap and Secrets (YAML)'),
    {
      name: 'resource',
      type: 'string',
      value: 'FILE',
      description: 'check every Pod, Deployment, ... of a manifest (YAML or JSON, `-` for stdin) as a CREATE',
    },
    { name: 'output', type: 'string', value: 'FORMAT', default: 'text', description: 'text or json' },
    {
      name: 'namespace',
      type: 'string',
      value: 'NS',
      default: 'default',
      description: 'namespace of objects that name none',
    },
    INSECURE_REGISTRY_FLAG,
    PRIVATE_HOST_FLAG,
    REGISTRY_CA_FLAG,
    CLOUD_CREDENTIALS_FLAG,
    KMS_ENDPOINT_FLAG,
    DOCKER_CONFIG_FLAG,
    {
      name: 'timeout',
      type: 'string',
      value: 'DURATION',
      default: '30s',
      description: 'time allowed per object',
    },
  ],
};

interface VerifyValues {
  readonly 'policy-file'?: string[];
  readonly resource?: string;
  readonly output?: string;
  readonly namespace?: string;
  readonly 'insecure-registry'?: string[];
  readonly 'private-host'?: string[];
  readonly 'kms-endpoint'?: string[];
  readonly 'registry-ca-file'?: string[];
  readonly 'cloud-credentials'?: string[];
  readonly 'docker-config'?: string;
  readonly timeout?: string;
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
  readonly images: readonly ImageVerification[];
}

/**
 * `signet verify IMAGE --policy-file FILE` or `signet verify --resource FILE --policy-file FILE`:
 * prints per object the decision and per image and policy what was verified. Exit 0 when every
 * object would be admitted, 1 when one would be denied.
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
  const output = values.output ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new UsageError(`--output must be text or json, got ${JSON.stringify(output)}`);
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
  const admission = await loadAdmission(files, namespace, values, note, progress);
  const reports: ObjectReport[] = [];
  try {
    for (const object of objects) {
      const request = createRequestFor(object, { namespace });
      if (request === undefined) continue;
      reports.push(await judge(admission, request, timeoutMs));
    }
  } finally {
    progress.stop();
  }
  const allowed = reports.every((r) => r.allowed);
  if (output === 'json') write(JSON.stringify({ allowed, objects: reports.map(jsonReport) }, null, 2));
  else printText(reports, positionals.length > 0, write);
  return allowed ? 0 : 1;
}

async function subjectsOf(positionals: readonly string[], values: VerifyValues): Promise<KubeObject[]> {
  const [image, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError('verify takes one IMAGE');
  if ((image === undefined) === (values.resource === undefined))
    throw new UsageError('verify takes either an IMAGE or --resource FILE');
  if (image !== undefined) return [podRunning(image, values.namespace ?? 'default')];
  const path = values.resource as string;
  const text = path === '-' ? await readStdin() : await readFile(path, 'utf8');
  const objects = manifestObjects(text, path === '-' ? 'stdin' : path);
  if (objects.length === 0) throw new InputError(`${path}: no objects`);
  return objects;
}

async function loadAdmission(
  files: readonly string[],
  namespace: string,
  values: VerifyValues,
  note: (line: string) => void,
  progress: RegistryProgress,
): Promise<Admission> {
  const registries = registrySettingsFrom(values);
  const loaded = mergePolicyObjects(await Promise.all(files.map((f) => loadPolicyFile(f, namespace))));
  requireUsablePolicyFiles(loaded);
  // The engines' worker threads do not keep the process alive once the command is done; KMS keys
  // are fetched once, with the SDKs' default credentials, as `signet serve` does.
  const { snapshot, problems } = await compileSnapshot(loaded, {
    namespace,
    engines: new WebhookPolicyEngines(createLogger({ level: 'silent' })),
    fetchRemotePolicy: remotePolicies(registries),
    kmsKeys: kmsKeyStore(registries),
    remoteRoots: remoteTrustRoots(registries),
  });
  for (const problem of problems) note(`warning: ${problem.object}: ${problem.message}`);
  if (snapshot === undefined) throw new InputError('the policies cannot be used (see the warnings above)');
  const keychain = dockerCredentials(values['docker-config']);
  const admission = assembleAdmission({
    logger: createLogger({ level: 'silent' }),
    metrics: new SignetMetrics({ defaultMetrics: false }),
    insecureRegistries: registries.insecureRegistries,
    registries,
    registryFetch: progress.wrap(),
    resolveDigests: true,
    ...(keychain ? { credentials: keychain } : {}),
  });
  admission.store.install(admission.store.begin(), snapshot);
  return admission;
}

/** Mutate, apply the patch, validate: what the API server does with a CREATE. */
async function judge(
  admission: Admission,
  request: AdmissionRequest,
  timeoutMs: number,
): Promise<ObjectReport> {
  const { pinned, validated } = await judgeCreate(admission.service, request, timeoutMs);
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
  };
}

function printText(reports: readonly ObjectReport[], single: boolean, write: (line: string) => void): void {
  for (const report of reports) {
    if (!single) write(`${report.kind} ${report.namespace}/${report.name}`);
    for (const [path, image] of Object.entries(report.pinned)) write(`  pinned ${path} to ${image}`);
    for (const image of report.images) for (const line of describeImage(image)) write(line);
    for (const line of report.denials) write(`  denied: ${line}`);
    for (const line of report.warnings) write(`  warning: ${line}`);
    write(report.allowed ? 'ADMITTED' : 'DENIED');
  }
}

function describeImage(image: ImageVerification): string[] {
  const { verdict, digest } = image;
  const lines = [`${verdict.image}${digest && !verdict.image.includes('@') ? ` (${digest})` : ''}`];
  for (const check of image.checks) lines.push(...describeCheck(check));
  return lines;
}

function describeCheck(check: PolicyCheck): string[] {
  const lines = [`${check.passed ? 'PASS' : 'FAIL'} policy "${check.policy}" (${check.mode})`];
  if (!check.passed)
    lines.push(`  ${check.failure.kind} failure: ${check.failure.reason}${causeText(check.failure)}`);
  for (const authority of check.authorities)
    lines.push(`  authority "${authority.authority}": ${describeAuthority(authority)}`);
  return lines;
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
      policies: image.checks.map((check) => ({
        policy: check.policy,
        mode: check.mode,
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
