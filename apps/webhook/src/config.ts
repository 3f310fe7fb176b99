// What a running Signet is configured with, as plain data: the CLI validates its flags into these
// records (commands/serve-config.ts), and everything below the CLI reads them, never the flags.
import type { CloudProviderName } from '@signet/registry';

/** How Signet reaches registries and the other hosts it calls (`serve`, `verify` and `audit` alike). */
export interface RegistrySettings {
  readonly insecureRegistries: readonly string[];
  /**
   * Hosts that may be on private addresses when someone other than the operator names them: token
   * realms and redirects (besides the registries' own hosts), TUF mirrors, remote policies.
   */
  readonly privateHosts: readonly string[];
  /** PEM certificates, each file's content. */
  readonly caCertificates: readonly string[];
  readonly cloudCredentials: readonly CloudProviderName[];
  /** Endpoints `awskms://` and `azurekms://` keys may name besides the clouds' own. */
  readonly kmsEndpoints: readonly string[];
}

/** Where the default trust root comes from, and how the TUF-served roots are kept current. */
export interface TufConfig {
  /** `undefined`: the public-good root embedded at build time, never refreshed. */
  readonly mirror: string | undefined;
  readonly rootFile: string | undefined;
  readonly cacheDir: string | undefined;
  readonly refreshMs: number;
}

export type TlsConfig =
  | { readonly mode: 'files'; readonly certFile: string; readonly keyFile: string }
  | { readonly mode: 'self-managed'; readonly secretName: string; readonly serviceName: string };

/** Mutual TLS on the admission port (`--client-ca-file`). */
export interface ClientAuthConfig {
  readonly caFile: string;
  /** `--client-auth=required` (default): a caller without a valid client certificate is refused. */
  readonly required: boolean;
}

/** The background scan of what runs (cluster only). */
export interface AuditServeConfig {
  /** 0: no background scan. */
  readonly intervalMs: number;
  readonly allNamespaces: boolean;
  readonly concurrency: number;
  readonly maxResults: number;
  /** The Lease that lets one replica scan at a time. */
  readonly leaseName: string;
}

/** Verification records in the cluster: shared passes and stale-if-error (cluster only). */
export interface RecordsServeConfig {
  readonly enabled: boolean;
  /** 0: stale-if-error off (records still share passes). */
  readonly staleIfErrorMs: number;
  readonly maxRecords: number;
  /** The Secret in Signet's namespace holding the records' HMAC key. */
  readonly keySecret: string;
}

export interface ServeConfig {
  readonly port: number;
  readonly opsPort: number;
  readonly host: string;
  readonly opsHost: string;
  readonly namespace: string;
  /** Policies from files; when empty, from the cluster (`kubeconfig`, or in-cluster). */
  readonly policyFiles: readonly string[];
  readonly kubeconfig: string | undefined;
  /** The kubeconfig context (`--context`); `undefined`: its current-context. */
  readonly context?: string | undefined;
  readonly tls: TlsConfig;
  /** Callers authenticated by client certificate; `undefined`: any caller that completes TLS. */
  readonly clientAuth: ClientAuthConfig | undefined;
  /** The admission port's connection cap, and one source address's share of it. */
  readonly maxConnections: number;
  readonly maxConnectionsPerSource: number;
  readonly webhookName: string;
  /**
   * This replica as the holder of every Lease it campaigns for (`--leader-identity`, else the Pod
   * name); `undefined`: the host name and a random suffix, unique per process.
   */
  readonly leaderIdentity: string | undefined;
  readonly insecureRegistries: readonly string[];
  /** How registries are reached: insecure hosts, CA certificates, cloud credentials. */
  readonly registries: RegistrySettings;
  readonly cacheTtlMs: number;
  readonly resolveDigests: boolean;
  readonly allowUnpinnedTags: boolean;
  /** What an authority without `signatureFormat` reads, in order (`--signature-format-default`). */
  readonly signatureFormatDefault: readonly string[];
  /** The longest an ImagePolicyException may live, creation to expiry. */
  readonly exceptionMaxLifetimeMs: number;
  readonly maxRequestBytes: number;
  /** Policy objects `/validate-policy` compiles at a time, in capacity of its own. */
  readonly policyValidationConcurrency: number;
  readonly shutdownDrainMs: number;
  readonly shutdownGraceMs: number;
  readonly logLevel: string;
  /** How often KMS public keys (`key.kms`) are fetched again; never per admission. */
  readonly kmsRefreshMs: number;
  readonly tuf: TufConfig;
  /** The background scan (cluster only). */
  readonly audit: AuditServeConfig;
  /** Verification records in the cluster: shared passes and stale-if-error (cluster only). */
  readonly records: RecordsServeConfig;
}
