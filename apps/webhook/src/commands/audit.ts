// `signet audit`: what the webhook would decide about everything that runs (or is about to), as if
// its namespace were opted in. Objects come from a cluster or from manifests, policies from the
// cluster or from files; each object is judged as a CREATE by the webhook's own pipeline, a running
// Pod by the digests its runtime pulled.
import type { Writable } from 'node:stream';
import type { KubeObject } from '@signet/k8s-types';
import { SIGNATURE_FORMATS, type SignatureFormats } from '@signet/verifier';
import { stringify } from 'yaml';
import { oneShotAdmission } from '../admission/assemble-admission.js';
import { type AuditReport, auditReport, exitCodeOf, type NamespaceState } from '../audit/audit-report.js';
import { auditTable } from '../audit/audit-table.js';
import { auditSubjectsWith } from '../audit/auditor.js';
import { readManifests, readStdin } from '../audit/manifests.js';
import { ProgressLine, verificationCounts } from '../audit/progress.js';
import { auditSubjects } from '../audit/subjects.js';
import type { Command } from '../cli/command.js';
import {
  CLOUD_CREDENTIALS_FLAG,
  CONTEXT_FLAG,
  DOCKER_CONFIG_FLAG,
  EXCEPTION_MAX_LIFETIME_FLAG,
  exceptionMaxLifetimeMs,
  filenameFlag,
  INSECURE_REGISTRY_FLAG,
  KMS_ENDPOINT_FLAG,
  kubeconfigFlag,
  namespaceFlag,
  outputFlag,
  outputFormat,
  PRIVATE_HOST_FLAG,
  policyFileFlag,
  REGISTRY_CA_FLAG,
  SIGNATURE_FORMAT_DEFAULT_FLAG,
  signatureFormatDefault,
  signetNamespaceFlag,
} from '../cli/common-flags.js';
import { dockerCredentials } from '../cli/docker-credentials.js';
import type { FlagValues } from '../cli/flags.js';
import type { RegistrySettings } from '../config.js';
import { InputError, UsageError } from '../errors.js';
import { parseGoDuration } from '../http/duration.js';
import { KubeApiError, statusOf } from '../kube/kube-errors.js';
import { createLogger } from '../logger.js';
import { SignetMetrics } from '../metrics.js';
import { WebhookPolicyEngines } from '../policy/policy-engines.js';
import { readPolicyFiles } from '../policy/policy-file.js';
import type { PolicyObjects } from '../policy/policy-objects.js';
import { RECORDS_KEY_SECRET } from '../records/records-flags.js';
import { registrySettingsFrom } from '../registry-settings.js';

const OUTPUTS = ['table', 'json', 'yaml'] as const;

export const AUDIT_COMMAND: Command = {
  name: 'audit',
  summary:
    'signet audit: judge every workload and running Pod as if its namespace were opted in (exit 0 nothing would be denied, 1 something fails policy, 3 something could not be checked, 2 bad input).',
  synopsis: '[--kubeconfig PATH] [-n NS...] [-l SELECTOR] [-f FILE|DIR|-...] [--policy-file FILE...] [flags]',
  positionals: false,
  flags: [
    kubeconfigFlag(
      'the cluster to read objects and policies from',
      '$KUBECONFIG, else ~/.kube/config, else in-cluster',
    ),
    CONTEXT_FLAG,
    namespaceFlag('audit only this namespace', {
      default: 'every namespace Signet could intercept',
      multiple: true,
    }),
    {
      name: 'selector',
      short: 'l',
      type: 'string',
      value: 'SELECTOR',
      description: 'only objects with these labels (`app=web,tier!=db`)',
    },
    {
      name: 'opted-in-only',
      type: 'boolean',
      description: 'only namespaces labelled policy.sigstore.dev/include=true (what still runs unverified)',
    },
    filenameFlag('audit manifests instead of a cluster'),
    policyFileFlag('policies from YAML instead of the cluster'),
    signetNamespaceFlag("Signet's namespace: its config ConfigMap and the Secrets policies reference", {
      default: 'signet-system',
    }),
    outputFlag(OUTPUTS),
    INSECURE_REGISTRY_FLAG,
    PRIVATE_HOST_FLAG,
    REGISTRY_CA_FLAG,
    CLOUD_CREDENTIALS_FLAG,
    KMS_ENDPOINT_FLAG,
    DOCKER_CONFIG_FLAG,
    EXCEPTION_MAX_LIFETIME_FLAG,
    SIGNATURE_FORMAT_DEFAULT_FLAG,
    {
      name: 'concurrency',
      type: 'string',
      value: 'N',
      default: '8',
      description: 'objects judged at once (bounds registry load)',
    },
    {
      name: 'timeout',
      type: 'string',
      value: 'DURATION',
      default: '30s',
      description: 'time allowed per object',
    },
    {
      name: 'stale-if-error',
      type: 'string',
      value: 'DURATION',
      default: '24h',
      description:
        "the webhook's --stale-if-error (the chart's verificationRecords.staleIfError), for the NEXT POD column (0: records never admit)",
    },
    {
      name: 'verification-records-secret',
      type: 'string',
      value: 'NAME',
      default: RECORDS_KEY_SECRET,
      description: "the Secret in Signet's namespace holding the records' HMAC key (read only)",
    },
    { name: 'quiet', short: 'q', type: 'boolean', description: 'no progress lines on stderr' },
  ],
  run: ({ values, stdout, stderr }) => runAudit(values, stdout, stderr),
};

interface AuditValues {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace?: string[];
  readonly selector?: string;
  readonly 'opted-in-only'?: boolean;
  readonly filename?: string[];
  readonly 'policy-file'?: string[];
  readonly 'signet-namespace'?: string;
  readonly output?: string;
  readonly 'insecure-registry'?: string[];
  readonly 'private-host'?: string[];
  readonly 'kms-endpoint'?: string[];
  readonly 'registry-ca-file'?: string[];
  readonly 'cloud-credentials'?: string[];
  readonly 'docker-config'?: string;
  readonly concurrency?: string;
  readonly timeout?: string;
  readonly 'stale-if-error'?: string;
  readonly 'verification-records-secret'?: string;
  readonly quiet?: boolean;
  readonly 'exception-max-lifetime'?: string;
  readonly 'signature-format-default'?: string;
}

interface AuditSettings {
  readonly output: string;
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly signetNamespace: string;
  readonly manifests: readonly string[];
  readonly policyFiles: readonly string[];
  readonly exceptionMaxLifetimeMs: number;
  /** What an authority without `signatureFormat` reads (`--signature-format-default`). */
  readonly formats: SignatureFormats;
  /** The webhook's grace period, for the drain risk (0: records never admit). */
  readonly staleIfErrorMs: number;
  readonly recordsSecret: string;
}

function settingsOf(values: AuditValues): AuditSettings {
  const output = outputFormat(values.output, OUTPUTS);
  const concurrency = Number(values.concurrency ?? '8');
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256)
    throw new UsageError(
      `--concurrency must be a whole number from 1 to 256, got ${JSON.stringify(values.concurrency)}`,
    );
  const timeoutMs = parseGoDuration(values.timeout ?? '30s');
  if (timeoutMs === undefined)
    throw new UsageError(`--timeout must be a duration like 30s, got ${JSON.stringify(values.timeout)}`);
  const manifests = values.filename ?? [];
  const policyFiles = values['policy-file'] ?? [];
  if (manifests.length > 0 && (values.namespace !== undefined || values['opted-in-only']))
    throw new UsageError('--namespace and --opted-in-only read a cluster; -f audits manifests');
  const grace = values['stale-if-error'];
  const staleIfErrorMs = grace === '0' ? 0 : parseGoDuration(grace ?? '24h');
  if (staleIfErrorMs === undefined)
    throw new UsageError(`--stale-if-error must be a duration like 24h, or 0, got ${JSON.stringify(grace)}`);
  return {
    staleIfErrorMs,
    recordsSecret: values['verification-records-secret'] ?? RECORDS_KEY_SECRET,
    output,
    concurrency,
    timeoutMs,
    signetNamespace: values['signet-namespace'] ?? 'signet-system',
    manifests,
    policyFiles,
    exceptionMaxLifetimeMs: exceptionMaxLifetimeMs(values['exception-max-lifetime']),
    formats: SIGNATURE_FORMATS.withDefaults(signatureFormatDefault(values['signature-format-default'])),
  };
}

export async function runAudit(flags: FlagValues, out: Writable, err: Writable): Promise<number> {
  const values = flags as AuditValues;
  const settings = settingsOf(values);
  const registries = registrySettingsFrom(values);
  // The cluster is read only when objects or policies come from it.
  const kube =
    settings.manifests.length === 0 || settings.policyFiles.length === 0
      ? await loadKube(values.kubeconfig, values.context)
      : undefined;
  const policies =
    kube && settings.policyFiles.length === 0
      ? await kube.readPolicies(settings.signetNamespace)
      : await policiesFromFiles(settings);
  // CUE and Rego policies run in the engines' worker threads, loaded on the first such policy.
  const engines = new WebhookPolicyEngines(createLogger({ level: 'silent' }));
  try {
    return await auditWith(values, { ...settings, registries }, kube, policies, engines, out, err);
  } finally {
    await engines.close();
  }
}

async function auditWith(
  values: AuditValues,
  settings: AuditSettings & { readonly registries: RegistrySettings },
  kube: Kube | undefined,
  policies: PolicyObjects,
  engines: WebhookPolicyEngines,
  out: Writable,
  err: Writable,
): Promise<number> {
  const metrics = new SignetMetrics({ defaultMetrics: false });
  const keychain = dockerCredentials(values['docker-config']);
  // The drain risk counts the records the webhook would: read once from the cluster, if allowed.
  const grace = kube ? await kube.graceRecords(settings) : undefined;
  if (grace !== undefined && 'unavailable' in grace)
    err.write(`note: the NEXT POD column counts no verification records: ${grace.unavailable}\n`);
  const admission = await oneShotAdmission(policies, {
    logger: createLogger({ level: 'silent' }),
    metrics,
    namespace: settings.signetNamespace,
    maxExceptionLifetimeMs: settings.exceptionMaxLifetimeMs,
    formats: settings.formats,
    engines,
    onProblem: (problem) => err.write(`warning: ${problem.object}: ${problem.message}\n`),
    insecureRegistries: settings.registries.insecureRegistries,
    registries: settings.registries,
    resolveDigests: true,
    ...(kube ? { pullSecrets: kube.pullSecrets } : {}),
    ...(keychain ? { credentials: keychain } : {}),
    ...(grace !== undefined && 'grace' in grace ? { records: { grace: grace.grace } } : {}),
  });
  const { objects, namespaces } = await objectsToAudit(values, settings, kube);
  const subjects = auditSubjects(objects, { namespace: 'default' });
  const progress = values.quiet ? undefined : new ProgressLine(err, () => verificationCounts(metrics));
  const audited = await auditSubjectsWith(subjects, {
    service: admission.service,
    concurrency: settings.concurrency,
    timeoutMs: settings.timeoutMs,
    drain: true,
    ...(progress ? { onProgress: progress.update } : {}),
  });
  await progress?.finish();
  const report = auditReport(audited, namespaces);
  out.write(`${format(report, settings.output)}\n`);
  return exitCodeOf(report);
}

async function objectsToAudit(
  values: AuditValues,
  settings: AuditSettings,
  kube: Kube | undefined,
): Promise<{ objects: readonly KubeObject[]; namespaces: readonly NamespaceState[] }> {
  if (settings.manifests.length > 0) {
    const objects = await readManifests(settings.manifests, readStdin);
    if (objects.length === 0) throw new InputError(`${settings.manifests.join(', ')}: no objects`);
    return { objects, namespaces: [] };
  }
  if (kube === undefined) throw new Error('a cluster audit without a cluster');
  return kube.inventory
    .read({
      ...(values.namespace ? { namespaces: values.namespace } : {}),
      optedInOnly: values['opted-in-only'] === true,
      ...(values.selector ? { labelSelector: values.selector } : {}),
      signetNamespace: settings.signetNamespace,
    })
    .catch((error: unknown) => {
      if (error instanceof KubeApiError)
        throw new InputError(`cannot read the cluster: ${error.message}`, { cause: error });
      throw error;
    });
}

function format(report: AuditReport, output: string): string {
  if (output === 'json') return JSON.stringify(report, null, 2);
  if (output === 'yaml') return stringify(report, { lineWidth: 0 }).trimEnd();
  return auditTable(report);
}

async function policiesFromFiles(settings: AuditSettings): Promise<PolicyObjects> {
  if (settings.policyFiles.length === 0)
    throw new UsageError('auditing manifests needs --policy-file, or --kubeconfig to read the policies');
  return readPolicyFiles(settings.policyFiles, settings.signetNamespace);
}

type Kube = Awaited<ReturnType<typeof loadKube>>;

/** The cluster side of an audit: objects, policies (read once) and pull secrets. */
async function loadKube(kubeconfig: string | undefined, context: string | undefined) {
  const [
    { openKubeApi },
    { ClusterInventory },
    { ClusterPolicySource },
    { KubePullSecretLookup },
    { listGraceRecords },
  ] = await Promise.all([
    import('../kube/kube-api.js'),
    import('../audit/cluster-inventory.js'),
    import('../kube/cluster-source.js'),
    import('../kube/pull-secret-lookup.js'),
    import('../records/listed-records.js'),
  ]);
  const api = openKubeApi({ kubeconfig, context });
  return {
    api,
    inventory: new ClusterInventory(api),
    pullSecrets: new KubePullSecretLookup(api),
    /** The verification records, listed once (for the drain risk). */
    graceRecords: (settings: AuditSettings) =>
      listGraceRecords(api, {
        namespace: settings.signetNamespace,
        keySecret: settings.recordsSecret,
        graceMs: settings.staleIfErrorMs,
      }),
    /**
     * The policy objects as the webhook sees them, listed once. A refusal (401, 403) ends the wait
     * at once; anything else is retried for 30 s, then said.
     */
    async readPolicies(namespace: string): Promise<PolicyObjects> {
      const logger = createLogger({ level: 'silent' });
      let timer: NodeJS.Timeout | undefined;
      let last: unknown;
      let refused: ((error: unknown) => void) | undefined;
      const failed = new Promise<never>((_, reject) => {
        refused = reject;
        timer = setTimeout(() => {
          const why = last instanceof Error ? `: ${last.message}` : ' (RBAC? is the cluster up?)';
          reject(new InputError(`could not list the policies within 30s${why}`, { cause: last }));
        }, 30_000);
      });
      failed.catch(() => undefined); // raced below; a refusal may come before the race starts
      const source = new ClusterPolicySource({
        api,
        namespace,
        logger,
        onChange: () => {},
        onError: (error) => {
          last = error;
          const status = statusOf(error);
          if (status === 401 || status === 403)
            refused?.(
              new InputError(`cannot read the policies: ${(error as Error).message}`, { cause: error }),
            );
        },
        debounceMs: 0,
      });
      try {
        await source.start();
        await Promise.race([source.synced, failed]);
        return source.snapshot();
      } finally {
        clearTimeout(timer);
        await source.stop();
      }
    },
  };
}
