// Signet itself, as a host process: the built `signet serve` CLI (dist/bin/signet.js) under the
// pinned Node, watching the test cluster's policies through a kubeconfig, serving TLS from a CA
// made for the run, and registered with the API server through a URL. Scenarios drive it exactly
// as the naive fixture.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort, type ManagedProcess } from '@signet/testbed';
import { createCertificateAuthority, issueServingCertificate, webhookConfigurations } from '@signet/webhook';
import type { TestCluster } from './providers/test-cluster.js';
import { type AdmissionRecord, readAdmissionLog } from './webhooks/admission-log.js';
import type { WebhookUnderTest } from './webhooks/webhook-under-test.js';

/** Signet's own namespace: `config-policy-controller` and the Secrets policies reference live here. */
export const SIGNET_NAMESPACE = 'signet-system';

export interface SignetWebhookOptions {
  /** The cluster Signet watches (its kubeconfig) and whose process group it runs in. */
  readonly cluster: Pick<TestCluster, 'kubeconfig' | 'group' | 'runDir'>;
  /** `host:port` of the plain-HTTP loopback registries the test images live in. */
  readonly insecureRegistries: readonly string[];
  /** Name of the webhook configurations (default `signet`). */
  readonly name?: string;
  /** The API server's timeout for one review (default 15 s). */
  readonly timeoutSeconds?: number;
  /** `--cache-ttl` (default Signet's 5m). */
  readonly cacheTtl?: string;
  readonly logLevel?: string;
  readonly readyTimeoutMs?: number;
  /** `ready` (default): until `/readyz` answers 200; `listening`: until it serves, ready or not. */
  readonly waitFor?: 'ready' | 'listening';
  /**
   * More `signet serve` flags. The background audit is off (`--audit-interval=0`) unless these
   * set it: scenarios that do not test it get no scans beside their admissions.
   */
  readonly extraArgs?: readonly string[];
  /** The process's name in the group, and its log file's (default `signet`). */
  readonly processName?: string;
  /** `NODE_OPTIONS` for the process (the chart sets `--max-old-space-size=256 --max-semi-space-size=8`). */
  readonly nodeOptions?: string;
  /** The admission port (default a free one): known before start when the API server must name it. */
  readonly port?: number;
}

export interface SignetWebhook extends WebhookUnderTest {
  /** `https://127.0.0.1:PORT` of the admission endpoints. */
  readonly url: string;
  /** `http://127.0.0.1:PORT` of `/healthz`, `/readyz`, `/metrics`. */
  readonly opsUrl: string;
  /** base64 PEM of the CA that signed the serving certificate. */
  readonly caBundle: string;
  /** That CA, PEM. */
  readonly caPem: string;
  readonly process: ManagedProcess;
  /** The command line it was started with, for reports and the demo. */
  readonly commandLine: readonly string[];
  /** The names in Signet's last `policies loaded` log line (`undefined` before the first). */
  loadedPolicies(): Promise<readonly string[] | undefined>;
  /** Resolves once the last `policies loaded` line lists every name as usable (not broken). */
  waitForPolicies(names: readonly string[], options?: { timeoutMs?: number }): Promise<void>;
  /** `GET /metrics` text. */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * The `signet` executable (`apps/webhook/dist/bin/signet.js`, the package's `bin`), found through
 * the `@signet/webhook` package; `$SIGNET_CLI` overrides it.
 */
export function signetCliPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SIGNET_CLI) return env.SIGNET_CLI;
  const main = createRequire(import.meta.url).resolve('@signet/webhook');
  return join(dirname(main), 'bin', 'signet.js');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts `node apps/webhook/dist/bin/signet.js serve` on free loopback ports with a fresh CA and waits
 * until `/readyz` answers 200 (after Signet's first policy sync). The policy CRDs must be installed
 * first (`installPolicyCrds`): Signet watches ClusterImagePolicies from its start.
 */
export async function startSignet(options: SignetWebhookOptions): Promise<SignetWebhook> {
  const cli = signetCliPath();
  if (!existsSync(cli)) {
    throw new Error(
      `the Signet CLI is not built: ${cli} is missing (run \`pnpm turbo run build --filter=@signet/e2e...\`)`,
    );
  }
  const { group, runDir, kubeconfig } = options.cluster;
  const ca = await createCertificateAuthority('signet-e2e-webhook-ca', 1);
  const serving = await issueServingCertificate(ca, ['127.0.0.1', 'localhost'], 1);
  const [port, opsPort] = [options.port ?? (await freePort()), await freePort()];
  // Per process: several Signets of one cluster must not reload each other's certificate.
  const certFile = join(runDir, `signet-tls-${port}.crt`);
  const keyFile = join(runDir, `signet-tls-${port}.key`);
  await writeFile(certFile, serving.cert);
  await writeFile(keyFile, serving.key, { mode: 0o600 });
  const name = options.name ?? 'signet';
  const args = [
    cli,
    'serve',
    `--port=${port}`,
    `--ops-port=${opsPort}`,
    '--host=127.0.0.1',
    '--ops-host=127.0.0.1',
    `--signet-namespace=${SIGNET_NAMESPACE}`,
    `--kubeconfig=${kubeconfig}`,
    `--tls-cert-file=${certFile}`,
    `--tls-key-file=${keyFile}`,
    `--webhook-name=${name}`,
    ...options.insecureRegistries.map((host) => `--insecure-registry=${host}`),
    ...(options.cacheTtl ? [`--cache-ttl=${options.cacheTtl}`] : []),
    `--log-level=${options.logLevel ?? 'info'}`,
    ...(options.extraArgs?.some((a) => a.startsWith('--audit-interval')) ? [] : ['--audit-interval=0']),
    ...(options.extraArgs ?? []),
  ];
  const opsUrl = `http://127.0.0.1:${opsPort}`;
  const managed = await startSignetProcess({
    group,
    ...(options.processName ? { name: options.processName } : {}),
    ...(options.nodeOptions ? { nodeOptions: options.nodeOptions } : {}),
    args,
    opsUrl,
    ...(options.readyTimeoutMs ? { readyTimeoutMs: options.readyTimeoutMs } : {}),
    ...(options.waitFor ? { waitFor: options.waitFor } : {}),
  });
  const url = `https://127.0.0.1:${port}`;
  const caBundle = Buffer.from(ca.cert).toString('base64');
  const loadedPolicies = async (): Promise<readonly string[] | undefined> => {
    const log = await readFile(managed.logPath, 'utf8').catch(() => '');
    return lastLoadedPolicies(log);
  };
  return {
    name: 'signet',
    logFile: managed.logPath,
    url,
    opsUrl,
    caBundle,
    caPem: ca.cert,
    process: managed,
    commandLine: [process.execPath, ...args],
    configurations: () =>
      webhookConfigurations({
        name,
        endpoint: { url },
        caBundle,
        namespace: SIGNET_NAMESPACE,
        mutating: true,
        timeoutSeconds: options.timeoutSeconds ?? 15,
      }),
    admissions: (): Promise<AdmissionRecord[]> => readAdmissionLog(managed.logPath),
    loadedPolicies,
    waitForPolicies: async (names, wait = {}) => {
      const deadline = Date.now() + (wait.timeoutMs ?? 30_000);
      for (;;) {
        const loaded = await loadedPolicies();
        if (names.every((n) => loaded?.includes(n))) return;
        if (Date.now() > deadline) {
          throw new Error(
            `Signet did not load policies [${names.join(', ')}]; last loaded: ` +
              `${loaded ? `[${loaded.join(', ')}]` : 'none'} (log ${managed.logPath})`,
          );
        }
        await sleep(200);
      }
    },
    metrics: async () => {
      const response = await fetch(`${opsUrl}/metrics`, { signal: AbortSignal.timeout(5_000) });
      return response.text();
    },
    stop: async () => {
      await managed.stop();
    },
  };
}

/**
 * Runs `node <cli> <args>` (the CLI path is the first argument) in `group`, logging to
 * `<runDir>/signet.log`, and waits until `<opsUrl>/readyz` answers 200.
 */
export function startSignetProcess(options: {
  readonly group: TestCluster['group'];
  readonly args: readonly string[];
  readonly opsUrl: string;
  readonly readyTimeoutMs?: number;
  readonly waitFor?: 'ready' | 'listening';
  readonly name?: string;
  readonly nodeOptions?: string;
}): Promise<ManagedProcess> {
  return options.group.start({
    name: options.name ?? 'signet',
    // The pinned Node 26 that runs this process (pnpm puts the `node` devDependency first on PATH).
    command: process.execPath,
    args: options.args,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: options.group.runDir,
      NODE_ENV: 'production',
      ...(options.nodeOptions ? { NODE_OPTIONS: options.nodeOptions } : {}),
    },
    ready:
      options.waitFor === 'listening'
        ? { kind: 'log', pattern: /"msg":"listening"/ }
        : { kind: 'http', url: `${options.opsUrl}/readyz` },
    readyTimeoutMs: options.readyTimeoutMs ?? 60_000,
  });
}

/**
 * The usable policies of the last `policies loaded` line of a Signet log: its `policies` less its
 * `broken` ones (a policy whose TrustRoot or Secret is missing is listed in both).
 */
export function lastLoadedPolicies(log: string): readonly string[] | undefined {
  let names: readonly string[] | undefined;
  for (const line of log.split('\n')) {
    if (!line.includes('"policies loaded"')) continue;
    try {
      const entry = JSON.parse(line) as { msg?: unknown; policies?: unknown; broken?: unknown };
      if (entry.msg === 'policies loaded' && Array.isArray(entry.policies)) {
        const broken = new Set(Array.isArray(entry.broken) ? entry.broken : []);
        names = entry.policies.filter((p): p is string => typeof p === 'string' && !broken.has(p));
      }
    } catch {
      // Not a JSON line.
    }
  }
  return names;
}
