import { INSECURE_REGISTRY_FLAG, policyFileFlag } from '../cli/common-flags.js';
import type { CommandSpec, FlagValues } from '../cli/flags.js';
import { UsageError } from '../errors.js';
import { parseGoDuration } from '../http/duration.js';

export const SERVE_COMMAND: CommandSpec = {
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
    {
      name: 'namespace',
      type: 'string',
      value: 'NS',
      default: '$POD_NAMESPACE, else signet-system',
      description:
        "Signet's namespace: its config ConfigMap and the Secrets policies reference; never intercepted",
    },
    policyFileFlag('policies from YAML instead of the cluster (exclusive with --kubeconfig)'),
    {
      name: 'kubeconfig',
      type: 'string',
      value: 'PATH',
      default: 'in-cluster, else ~/.kube/config',
      description: 'where the cluster is',
    },
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
      name: 'webhook-name',
      type: 'string',
      value: 'NAME',
      default: 'signet',
      description: 'name of the Validating/MutatingWebhookConfiguration (for caBundle)',
    },
    INSECURE_REGISTRY_FLAG,
    {
      name: 'cache-ttl',
      type: 'string',
      value: 'DURATION',
      default: '5m',
      description: 'how long a verification pass is reused (same policy revision and digest)',
    },
    {
      name: 'no-resolve-digests',
      type: 'boolean',
      description: 'the mutating endpoint does not pin tags to digests',
    },
    {
      name: 'log-level',
      type: 'string',
      value: 'LEVEL',
      default: 'info',
      description: 'trace, debug, info, warn, error, fatal or silent',
    },
  ],
};

/** The flag values of `signet serve`, as `parseCommandLine` returns them for SERVE_COMMAND. */
interface ServeValues {
  readonly port?: string;
  readonly 'ops-port'?: string;
  readonly host?: string;
  readonly 'ops-host'?: string;
  readonly namespace?: string;
  readonly kubeconfig?: string;
  readonly 'policy-file'?: string[];
  readonly 'tls-cert-file'?: string;
  readonly 'tls-key-file'?: string;
  readonly 'tls-self-managed'?: boolean;
  readonly 'tls-secret'?: string;
  readonly 'service-name'?: string;
  readonly 'webhook-name'?: string;
  readonly 'insecure-registry'?: string[];
  readonly 'cache-ttl'?: string;
  readonly 'no-resolve-digests'?: boolean;
  readonly 'log-level'?: string;
}

export type TlsConfig =
  | { readonly mode: 'files'; readonly certFile: string; readonly keyFile: string }
  | { readonly mode: 'self-managed'; readonly secretName: string; readonly serviceName: string };

export interface ServeConfig {
  readonly port: number;
  readonly opsPort: number;
  readonly host: string;
  readonly opsHost: string;
  readonly namespace: string;
  /** Policies from files; when empty, from the cluster (`kubeconfig`, or in-cluster). */
  readonly policyFiles: readonly string[];
  readonly kubeconfig: string | undefined;
  readonly tls: TlsConfig;
  readonly webhookName: string;
  readonly insecureRegistries: readonly string[];
  readonly cacheTtlMs: number;
  readonly resolveDigests: boolean;
  readonly logLevel: string;
}

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

function port(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new UsageError(`--${flag} must be a port number, got ${JSON.stringify(value)}`);
  return n;
}

/** Validates the flags of `signet serve`; every problem is a UsageError naming the flag. */
export function serveConfigFrom(flags: FlagValues, env: NodeJS.ProcessEnv): ServeConfig {
  const values = flags as ServeValues;
  const namespace = values.namespace ?? env.POD_NAMESPACE ?? 'signet-system';
  const ports = {
    port: port(values.port, 8443, 'port'),
    opsPort: port(values['ops-port'], 8080, 'ops-port'),
  };
  const files = values['policy-file'] ?? [];
  if (files.length > 0 && values.kubeconfig !== undefined) {
    throw new UsageError(
      '--policy-file and --kubeconfig are exclusive: policies come from files or from a cluster',
    );
  }
  const tls = tlsFrom(values);
  if (tls.mode === 'self-managed' && files.length > 0) {
    throw new UsageError(
      '--tls-self-managed keeps its certificate in the cluster and cannot be used with --policy-file',
    );
  }
  const ttl = parseGoDuration(values['cache-ttl'] ?? '5m');
  if (ttl === undefined)
    throw new UsageError(
      `--cache-ttl must be a duration like 5m or 30s, got ${JSON.stringify(values['cache-ttl'])}`,
    );
  const logLevel = values['log-level'] ?? 'info';
  if (!LEVELS.has(logLevel)) throw new UsageError(`--log-level must be one of ${[...LEVELS].join(', ')}`);
  for (const host of values['insecure-registry'] ?? []) {
    if (!/^[A-Za-z0-9.-]+(:\d+)?$|^\[[0-9a-fA-F:]+\](:\d+)?$/.test(host)) {
      throw new UsageError(`--insecure-registry takes host[:port], got ${JSON.stringify(host)}`);
    }
  }
  return {
    ...ports,
    host: values.host ?? '0.0.0.0',
    opsHost: values['ops-host'] ?? values.host ?? '0.0.0.0',
    namespace,
    policyFiles: files,
    kubeconfig: values.kubeconfig,
    tls,
    webhookName: values['webhook-name'] ?? 'signet',
    insecureRegistries: values['insecure-registry'] ?? [],
    cacheTtlMs: ttl,
    resolveDigests: !values['no-resolve-digests'],
    logLevel,
  };
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
