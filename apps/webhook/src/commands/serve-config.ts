import { parseGoDuration } from '../http/duration.js';
import { UsageError } from './usage-error.js';

export const SERVE_OPTIONS = {
  port: { type: 'string' },
  'ops-port': { type: 'string' },
  host: { type: 'string' },
  'ops-host': { type: 'string' },
  namespace: { type: 'string' },
  kubeconfig: { type: 'string' },
  'policy-file': { type: 'string', multiple: true },
  'tls-cert-file': { type: 'string' },
  'tls-key-file': { type: 'string' },
  'tls-self-managed': { type: 'boolean' },
  'tls-secret': { type: 'string' },
  'service-name': { type: 'string' },
  'webhook-name': { type: 'string' },
  'insecure-registry': { type: 'string', multiple: true },
  'cache-ttl': { type: 'string' },
  'no-resolve-digests': { type: 'boolean' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type ServeValues = {
  [K in keyof typeof SERVE_OPTIONS]?: (typeof SERVE_OPTIONS)[K] extends { multiple: true }
    ? string[]
    : (typeof SERVE_OPTIONS)[K]['type'] extends 'boolean'
      ? boolean
      : string;
};

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
export function serveConfigFrom(values: ServeValues, env: NodeJS.ProcessEnv): ServeConfig {
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
