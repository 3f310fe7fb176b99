import { AUDIT_SERVE_FLAGS, auditServeConfigFrom } from '../audit/audit-flags.js';
import type { Command } from '../cli/command.js';
import {
  CLOUD_CREDENTIALS_FLAG,
  CONTEXT_FLAG,
  EXCEPTION_MAX_LIFETIME_FLAG,
  exceptionMaxLifetimeMs,
  INSECURE_REGISTRY_FLAG,
  KMS_ENDPOINT_FLAG,
  kubeconfigFlag,
  PRIVATE_HOST_FLAG,
  policyFileFlag,
  REGISTRY_CA_FLAG,
  SIGNATURE_FORMAT_DEFAULT_FLAG,
  signatureFormatDefault,
  signetNamespaceFlag,
} from '../cli/common-flags.js';
import type { FlagValues } from '../cli/flags.js';
import type { ClientAuthConfig, ServeConfig, TlsConfig, TufConfig } from '../config.js';
import { UsageError } from '../errors.js';
import { parseGoDuration } from '../http/duration.js';
import { RECORDS_SERVE_FLAGS, recordsServeConfigFrom } from '../records/records-flags.js';
import { registrySettingsFrom } from '../registry-settings.js';
import { runServe } from './serve.js';

export const SERVE_COMMAND: Command = {
  name: 'serve',
  summary: 'signet serve: run the admission webhook (HTTPS admission port, plain-HTTP operations port).',
  synopsis:
    '[--policy-file FILE... | --kubeconfig PATH] (--tls-cert-file F --tls-key-file F | --tls-self-managed) [flags]',
  positionals: false,
  flags: [
    {
      name: 'port',
      type: 'string',
      value: 'PORT',
      default: '8443',
      description: 'HTTPS admission port (0: any free port)',
    },
    {
      name: 'ops-port',
      type: 'string',
      value: 'PORT',
      default: '8080',
      description: 'plain-HTTP port of /healthz, /readyz and /metrics',
    },
    {
      name: 'host',
      type: 'string',
      value: 'ADDRESS',
      default: '0.0.0.0',
      description: 'listen address of the admission port',
    },
    {
      name: 'ops-host',
      type: 'string',
      value: 'ADDRESS',
      default: '--host',
      description: 'listen address of the operations port',
    },
    signetNamespaceFlag(
      "Signet's namespace: its config ConfigMap and the Secrets policies reference; never intercepted",
      { default: '$POD_NAMESPACE, else signet-system', deprecatedNamespace: true },
    ),
    policyFileFlag('policies from YAML instead of the cluster (exclusive with --kubeconfig)'),
    kubeconfigFlag('where the cluster is', '$KUBECONFIG, else ~/.kube/config, else in-cluster'),
    CONTEXT_FLAG,
    {
      name: 'tls-cert-file',
      type: 'string',
      value: 'FILE',
      description: 'serving certificate (PEM); reloaded when the file changes',
    },
    {
      name: 'tls-key-file',
      type: 'string',
      value: 'FILE',
      description: "the serving certificate's private key (PEM)",
    },
    {
      name: 'tls-self-managed',
      type: 'boolean',
      description: "keep a CA and certificate in a Secret and patch the webhooks' caBundle (cluster only)",
    },
    {
      name: 'tls-secret',
      type: 'string',
      value: 'NAME',
      default: 'signet-webhook-tls',
      description: 'the Secret of --tls-self-managed',
    },
    {
      name: 'service-name',
      type: 'string',
      value: 'NAME',
      default: 'signet-webhook',
      description: 'the Service whose DNS names the self-managed certificate carries',
    },
    {
      name: 'client-ca-file',
      type: 'string',
      value: 'FILE',
      description:
        "CA bundle (PEM) of the API server's client certificate: the admission port asks callers for one; reloaded when the file changes",
    },
    {
      name: 'client-auth',
      type: 'string',
      value: 'MODE',
      default: 'required',
      description:
        'with --client-ca-file: required (no valid certificate, no review) or if-given (a caller without one is still served)',
    },
    {
      name: 'max-connections',
      type: 'string',
      value: 'N',
      default: '1024',
      description:
        'connections the admission port holds at once; when full, one still in its TLS handshake makes room',
    },
    {
      name: 'max-connections-per-source',
      type: 'string',
      value: 'N',
      default: '256',
      description: 'connections one source address may hold on the admission port',
    },
    {
      name: 'webhook-name',
      type: 'string',
      value: 'NAME',
      default: 'signet',
      description: 'name of the Validating/MutatingWebhookConfiguration (for caBundle)',
    },
    INSECURE_REGISTRY_FLAG,
    PRIVATE_HOST_FLAG,
    REGISTRY_CA_FLAG,
    CLOUD_CREDENTIALS_FLAG,
    {
      name: 'cache-ttl',
      type: 'string',
      value: 'DURATION',
      default: '5m',
      description: 'how long a verification pass is reused (same policy revision and digest)',
    },
    EXCEPTION_MAX_LIFETIME_FLAG,
    SIGNATURE_FORMAT_DEFAULT_FLAG,
    {
      name: 'no-resolve-digests',
      type: 'boolean',
      description: 'the mutating endpoint does not pin tags to digests',
    },
    {
      name: 'max-request-bytes',
      type: 'string',
      value: 'BYTES',
      default: '4194304',
      description: 'largest AdmissionReview accepted (object and old object, at most 1.5 MiB each in etcd)',
    },
    {
      name: 'policy-validation-concurrency',
      type: 'string',
      value: 'N',
      default: '2',
      description:
        'policy objects checked at a time by /validate-policy (1 to 16; 8 more wait, beyond: busy); own engines, nothing kept',
    },
    {
      name: 'shutdown-drain',
      type: 'string',
      value: 'DURATION',
      default: '5s',
      description: 'after SIGTERM: time not ready but still answering, for endpoints to drop this replica',
    },
    {
      name: 'shutdown-grace',
      type: 'string',
      value: 'DURATION',
      default: '10s',
      description: 'after the drain: time in-flight reviews get to finish',
    },
    {
      name: 'leader-identity',
      type: 'string',
      value: 'NAME',
      default: '$POD_NAME, else hostname and a random suffix',
      deprecatedAliases: ['audit-identity'],
      description:
        "this replica as the holder of Signet's Leases (policy status, background scan); unique per replica",
    },
    ...AUDIT_SERVE_FLAGS,
    ...RECORDS_SERVE_FLAGS,
    {
      name: 'log-level',
      type: 'string',
      value: 'LEVEL',
      default: 'info',
      choices: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'],
      description: 'trace, debug, info, warn, error, fatal or silent',
    },
    {
      name: 'kms-refresh',
      type: 'string',
      value: 'DURATION',
      default: '5m',
      description: 'how often `key.kms` public keys are fetched again (10s to 24h; never per admission)',
    },
    KMS_ENDPOINT_FLAG,
    {
      name: 'tuf-mirror',
      type: 'string',
      value: 'URL',
      default: 'none: the root embedded at build time',
      description:
        'TUF mirror the default trust root is refreshed from (https://tuf-repo-cdn.sigstore.dev, a mirror, or a private Sigstore)',
    },
    {
      name: 'tuf-root',
      type: 'string',
      value: 'FILE',
      default: 'the embedded public-good root.json',
      description:
        'initial TUF root.json for --tuf-mirror (a private Sigstore: its trust replaces the public-good root)',
    },
    {
      name: 'tuf-cache-dir',
      type: 'string',
      value: 'DIR',
      default: 'none',
      description: 'writable directory for verified TUF metadata, so a rotated root survives restarts',
    },
    {
      name: 'tuf-refresh',
      type: 'string',
      value: 'DURATION',
      default: '1h',
      description: 'how often --tuf-mirror and `remote` TrustRoots are refreshed (1m to 24h)',
    },
  ],
  run: ({ values, env }) => runServe(serveConfigFrom(values, env)),
};

/** The flag values of `signet serve`, as `parseCommandLine` returns them for SERVE_COMMAND. */
interface ServeValues {
  readonly port?: string;
  readonly 'ops-port'?: string;
  readonly host?: string;
  readonly 'ops-host'?: string;
  readonly 'signet-namespace'?: string;
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly 'policy-file'?: string[];
  readonly 'tls-cert-file'?: string;
  readonly 'tls-key-file'?: string;
  readonly 'tls-self-managed'?: boolean;
  readonly 'tls-secret'?: string;
  readonly 'service-name'?: string;
  readonly 'webhook-name'?: string;
  readonly 'leader-identity'?: string;
  readonly 'client-ca-file'?: string;
  readonly 'client-auth'?: string;
  readonly 'max-connections'?: string;
  readonly 'max-connections-per-source'?: string;
  readonly 'insecure-registry'?: string[];
  readonly 'private-host'?: string[];
  readonly 'kms-endpoint'?: string[];
  readonly 'registry-ca-file'?: string[];
  readonly 'cloud-credentials'?: string[];
  readonly 'cache-ttl'?: string;
  readonly 'exception-max-lifetime'?: string;
  readonly 'no-resolve-digests'?: boolean;
  readonly 'allow-unpinned-tags'?: boolean;
  readonly 'signature-format-default'?: string;
  readonly 'max-request-bytes'?: string;
  readonly 'policy-validation-concurrency'?: string;
  readonly 'shutdown-drain'?: string;
  readonly 'shutdown-grace'?: string;
  readonly 'log-level'?: string;
  readonly 'kms-refresh'?: string;
  readonly 'tuf-mirror'?: string;
  readonly 'tuf-root'?: string;
  readonly 'tuf-cache-dir'?: string;
  readonly 'tuf-refresh'?: string;
}

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

function port(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new UsageError(`--${flag} must be a port number, got ${JSON.stringify(value)}`);
  return n;
}

function duration(value: string | undefined, fallback: string, flag: string): number {
  const ms = parseGoDuration(value ?? fallback);
  if (ms === undefined)
    throw new UsageError(`--${flag} must be a duration like 5m or 30s, got ${JSON.stringify(value)}`);
  return ms;
}

function bytes(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1024)
    throw new UsageError(`--${flag} must be a number of bytes (1024 or more), got ${JSON.stringify(value)}`);
  return n;
}

function count(
  value: string | undefined,
  fallback: number,
  flag: string,
  [min, max]: [number, number],
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UsageError(
      `--${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`,
    );
  return n;
}

/** Validates the flags of `signet serve`; every problem is a UsageError naming the flag. */
export function serveConfigFrom(flags: FlagValues, env: NodeJS.ProcessEnv): ServeConfig {
  const values = flags as ServeValues;
  const namespace = values['signet-namespace'] ?? env.POD_NAMESPACE ?? 'signet-system';
  const ports = {
    port: port(values.port, 8443, 'port'),
    opsPort: port(values['ops-port'], 8080, 'ops-port'),
  };
  const files = values['policy-file'] ?? [];
  for (const flag of ['kubeconfig', 'context'] as const) {
    if (files.length > 0 && values[flag] !== undefined) {
      throw new UsageError(
        `--policy-file and --${flag} are exclusive: policies come from files or from a cluster`,
      );
    }
  }
  const tls = tlsFrom(values);
  if (tls.mode === 'self-managed' && files.length > 0) {
    throw new UsageError(
      '--tls-self-managed keeps its certificate in the cluster and cannot be used with --policy-file',
    );
  }
  const ttl = duration(values['cache-ttl'], '5m', 'cache-ttl');
  const logLevel = values['log-level'] ?? 'info';
  if (!LEVELS.has(logLevel)) throw new UsageError(`--log-level must be one of ${[...LEVELS].join(', ')}`);
  const registries = registrySettingsFrom(values);
  const records = recordsServeConfigFrom(flags);
  if (records.enabled && files.length > 0) {
    throw new UsageError(
      '--verification-records keeps records in the cluster and cannot be used with --policy-file',
    );
  }
  return {
    ...ports,
    kmsRefreshMs: boundedDuration(values['kms-refresh'], '5m', 'kms-refresh', [10_000, 24 * HOUR]),
    tuf: tufFrom(values),
    host: values.host ?? '0.0.0.0',
    opsHost: values['ops-host'] ?? values.host ?? '0.0.0.0',
    namespace,
    policyFiles: files,
    kubeconfig: values.kubeconfig,
    context: values.context,
    tls,
    clientAuth: clientAuthFrom(values),
    ...connectionLimitsFrom(values),
    webhookName: values['webhook-name'] ?? 'signet',
    leaderIdentity: values['leader-identity'] ?? (env.POD_NAME || undefined),
    insecureRegistries: registries.insecureRegistries,
    registries,
    cacheTtlMs: ttl,
    resolveDigests: !values['no-resolve-digests'],
    allowUnpinnedTags: values['allow-unpinned-tags'] === true,
    signatureFormatDefault: signatureFormatDefault(values['signature-format-default']),
    exceptionMaxLifetimeMs: exceptionMaxLifetimeMs(values['exception-max-lifetime']),
    maxRequestBytes: bytes(values['max-request-bytes'], 4 * 1024 * 1024, 'max-request-bytes'),
    policyValidationConcurrency: count(
      values['policy-validation-concurrency'],
      2,
      'policy-validation-concurrency',
      [1, 16],
    ),
    shutdownDrainMs: duration(values['shutdown-drain'], '5s', 'shutdown-drain'),
    shutdownGraceMs: duration(values['shutdown-grace'], '10s', 'shutdown-grace'),
    logLevel,
    audit: auditServeConfigFrom(flags),
    records,
  };
}

const HOUR = 3_600_000;

/** A duration within bounds (the refresh periods: too short hammers a KMS or mirror, too long never refreshes). */
function boundedDuration(
  value: string | undefined,
  fallback: string,
  flag: string,
  [min, max]: [number, number],
): number {
  const ms = parseGoDuration(value ?? fallback);
  if (ms === undefined || ms < min || ms > max) {
    throw new UsageError(
      `--${flag} must be a duration between ${min / 1000}s and ${max / HOUR}h, got ${JSON.stringify(value)}`,
    );
  }
  return ms;
}

function tufFrom(values: ServeValues): TufConfig {
  const mirror = values['tuf-mirror'];
  if (mirror !== undefined && !/^https?:\/\/[^/\s]+/.test(mirror)) {
    throw new UsageError(`--tuf-mirror must be an http(s) URL, got ${JSON.stringify(mirror)}`);
  }
  if (mirror === undefined && (values['tuf-root'] !== undefined || values['tuf-cache-dir'] !== undefined)) {
    throw new UsageError('--tuf-root and --tuf-cache-dir need --tuf-mirror');
  }
  return {
    mirror,
    rootFile: values['tuf-root'],
    cacheDir: values['tuf-cache-dir'],
    refreshMs: boundedDuration(values['tuf-refresh'], '1h', 'tuf-refresh', [60_000, 24 * HOUR]),
  };
}

function clientAuthFrom(values: ServeValues): ClientAuthConfig | undefined {
  const mode = values['client-auth'];
  if (mode !== undefined && mode !== 'required' && mode !== 'if-given') {
    throw new UsageError(`--client-auth must be required or if-given, got ${JSON.stringify(mode)}`);
  }
  const caFile = values['client-ca-file'];
  if (caFile === undefined) {
    if (mode !== undefined) throw new UsageError('--client-auth needs --client-ca-file');
    return undefined;
  }
  return { caFile, required: mode !== 'if-given' };
}

function connectionLimitsFrom(
  values: ServeValues,
): Pick<ServeConfig, 'maxConnections' | 'maxConnectionsPerSource'> {
  const maxConnections = count(values['max-connections'], 1024, 'max-connections', [1, 65_536]);
  const maxConnectionsPerSource = count(
    values['max-connections-per-source'],
    256,
    'max-connections-per-source',
    [1, 65_536],
  );
  if (maxConnectionsPerSource > maxConnections) {
    throw new UsageError('--max-connections-per-source must not be above --max-connections');
  }
  return { maxConnections, maxConnectionsPerSource };
}

function tlsFrom(values: ServeValues): TlsConfig {
  const certFile = values['tls-cert-file'];
  const keyFile = values['tls-key-file'];
  if (values['tls-self-managed']) {
    if (certFile !== undefined || keyFile !== undefined) {
      throw new UsageError('--tls-self-managed and --tls-cert-file/--tls-key-file are exclusive');
    }
    return {
      mode: 'self-managed',
      secretName: values['tls-secret'] ?? 'signet-webhook-tls',
      serviceName: values['service-name'] ?? 'signet-webhook',
    };
  }
  if (certFile === undefined || keyFile === undefined) {
    throw new UsageError('TLS is required: give --tls-cert-file and --tls-key-file, or --tls-self-managed');
  }
  return { mode: 'files', certFile, keyFile };
}
