// Fulcio, the Sigstore certificate authority, on loopback: an ephemeral CA (a fresh root each run),
// no CT log (certificates carry no SCT, as GitHub's Fulcio), one OIDC issuer trusted.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TestbedError } from '../errors.js';
import type { ToolProgress } from '../go-build.js';
import { freePort, type ManagedProcess, type ProcessGroup } from '../process.js';
import { ensureTools } from '../tools.js';

/**
 * How Fulcio turns the issuer's tokens into certificates: `github-workflow` (SAN
 * `https://github.com/<job_workflow_ref>`, the workflow extensions; see `workflowClaims`) or
 * `email` (SAN = the verified `email` claim).
 */
export type IssuerType = 'github-workflow' | 'email';

export interface StartFulcioOptions {
  readonly group: ProcessGroup;
  /** The OIDC issuer URL Fulcio trusts (it fetches its discovery document and JWKS on start). */
  readonly issuerUrl: string;
  readonly issuerType: IssuerType;
  readonly onProgress?: (event: ToolProgress) => void;
  readonly readyTimeoutMs?: number;
}

export interface Fulcio {
  /**
   * `http://127.0.0.1:PORT`, its HTTP API (gRPC listens on another port: v1.8.8's single-port
   * "duplex" mode panics registering its metrics twice).
   */
  readonly url: string;
  /** The CA chain certificates are issued under, leaf-most first (PEM each), from `/api/v2/trustBundle`. */
  readonly chainPem: readonly string[];
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

export async function startFulcio(options: StartFulcioOptions): Promise<Fulcio> {
  const { fulcio: binary } = await ensureTools(['fulcio'], onProgress(options));
  const [port, grpcPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const runDir = options.group.runDir;
  const config = join(runDir, `fulcio-${port}.json`);
  // A test issuer sends no `email_verified` claim unless the test mints one.
  const issuer = {
    IssuerURL: options.issuerUrl,
    ClientID: 'sigstore',
    Type: options.issuerType,
    ...(options.issuerType === 'email' ? { SkipEmailVerification: true } : {}),
  };
  await writeFile(config, JSON.stringify({ OIDCIssuers: { [options.issuerUrl]: issuer } }));
  const url = `http://127.0.0.1:${port}`;
  const managed = await options.group.start({
    name: `fulcio-${port}`,
    command: binary,
    args: [
      'serve',
      ...['--ca', 'ephemeralca', '--ct-log-url', '', '--config-path', config],
      ...[
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--grpc-host',
        '127.0.0.1',
        '--grpc-port',
        String(grpcPort),
      ],
      ...['--metrics-port', String(metricsPort), '--log_type', 'dev'],
      ...['--legacy-unix-domain-socket', join(runDir, `fulcio-${port}.sock`)],
    ],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: runDir },
    ready: { kind: 'http', url: `${url}/api/v1/rootCert` },
    readyTimeoutMs: options.readyTimeoutMs ?? 60_000,
  });
  const chainPem = await trustBundle(url);
  return {
    url,
    chainPem,
    process: managed,
    stop: async () => {
      await managed.stop();
    },
  };
}

async function trustBundle(url: string): Promise<string[]> {
  const response = await fetch(`${url}/api/v2/trustBundle`, { signal: AbortSignal.timeout(10_000) });
  const body = (await response.json()) as { chains?: { certificates?: string[] }[] };
  const chain = body.chains?.[0]?.certificates;
  if (!response.ok || chain === undefined || chain.length === 0) {
    throw new TestbedError(
      'COMMAND_FAILED',
      `Fulcio at ${url} served no trust bundle: ${JSON.stringify(body)}`,
    );
  }
  return chain;
}

function onProgress(options: { readonly onProgress?: (event: ToolProgress) => void }) {
  return options.onProgress ? { onProgress: options.onProgress } : {};
}
