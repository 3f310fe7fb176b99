// A private Sigstore on loopback for keyless signing with the real cosign: an OIDC issuer the test
// controls, Fulcio trusting it, an RFC 3161 timestamp authority and, when asked, Rekor v2. What a
// verifier trusts is its `trustedRoot` (Sigstore's TrustedRoot JSON); what cosign signs with is
// its `signingConfig` (Sigstore's SigningConfig JSON).
import { X509Certificate } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ToolProgress } from '../go-build.js';
import type { ProcessGroup } from '../process.js';
import type { ToolName } from '../tools.js';
import { type Fulcio, type IssuerType, startFulcio } from './fulcio.js';
import { type OidcIssuer, startOidcIssuer } from './oidc-issuer.js';
import { type Rekor, startRekor } from './rekor.js';
import { startTimestampAuthority, type TimestampAuthority } from './timestamp-authority.js';

/** The programs a private Sigstore runs: for test set-ups that build them before the first test. */
export const PRIVATE_SIGSTORE_TOOLS: readonly ToolName[] = ['fulcio', 'timestamp-authority', 'rekor-server'];

export interface StartPrivateSigstoreOptions {
  readonly group: ProcessGroup;
  /** How Fulcio maps tokens to certificates (default `github-workflow`). */
  readonly issuerType?: IssuerType;
  /**
   * Also run Rekor v2 and list it in the trusted root and signing config (cosign then logs every
   * signature). Default false: GitHub's shape, no transparency log.
   */
  readonly rekor?: boolean;
  readonly onProgress?: (event: ToolProgress) => void;
}

/** The files cosign reads: `--trusted-root` and `--signing-config`. */
export interface SigstoreFiles {
  readonly trustedRoot: string;
  readonly signingConfig: string;
}

export interface PrivateSigstore {
  readonly issuer: OidcIssuer;
  readonly fulcio: Fulcio;
  readonly timestampAuthority: TimestampAuthority;
  readonly rekor: Rekor | undefined;
  /** TrustedRoot JSON (`application/vnd.dev.sigstore.trustedroot+json;version=0.1`). */
  readonly trustedRoot: Record<string, unknown>;
  /** SigningConfig JSON (`application/vnd.dev.sigstore.signingconfig.v0.2+json`). */
  readonly signingConfig: Record<string, unknown>;
  /** Writes both into `dir` and returns their paths. */
  writeFiles(dir: string): Promise<SigstoreFiles>;
  stop(): Promise<void>;
}

/** Starts the services one after another (Fulcio reads the issuer's discovery document on start). */
export async function startPrivateSigstore(options: StartPrivateSigstoreOptions): Promise<PrivateSigstore> {
  const progress = options.onProgress ? { onProgress: options.onProgress } : {};
  const issuer = await startOidcIssuer();
  const started: { stop(): Promise<void> }[] = [issuer];
  const stop = async () => {
    for (const service of started.reverse()) await service.stop();
  };
  try {
    const fulcio = await startFulcio({
      group: options.group,
      issuerUrl: issuer.url,
      issuerType: options.issuerType ?? 'github-workflow',
      ...progress,
    });
    started.push(fulcio);
    const timestampAuthority = await startTimestampAuthority({ group: options.group, ...progress });
    started.push(timestampAuthority);
    const rekor = options.rekor ? await startRekor({ group: options.group, ...progress }) : undefined;
    if (rekor) started.push(rekor);
    const trustedRoot = trustedRootFor(fulcio, timestampAuthority, rekor);
    const signingConfig = signingConfigFor(issuer, fulcio, timestampAuthority, rekor);
    return {
      issuer,
      fulcio,
      timestampAuthority,
      rekor,
      trustedRoot,
      signingConfig,
      async writeFiles(dir) {
        await mkdir(dir, { recursive: true });
        const files = {
          trustedRoot: join(dir, 'trusted_root.json'),
          signingConfig: join(dir, 'signing_config.json'),
        };
        await writeFile(files.trustedRoot, JSON.stringify(trustedRoot, null, 2));
        await writeFile(files.signingConfig, JSON.stringify(signingConfig, null, 2));
        return files;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function der(pem: string): string {
  return new X509Certificate(pem).raw.toString('base64');
}

/** The certificate's subject as TrustedRoot's `DistinguishedName`. */
function subjectOf(pem: string): { organization: string; commonName: string } {
  const fields = new Map(
    new X509Certificate(pem).subject.split('\n').map((line) => {
      const at = line.indexOf('=');
      return [line.slice(0, at), line.slice(at + 1)] as const;
    }),
  );
  return { organization: fields.get('O') ?? '', commonName: fields.get('CN') ?? '' };
}

/** Valid from the chain's newest `notBefore` (each service's chain is minted when it starts). */
function validFrom(chain: readonly string[]): string {
  const starts = chain.map((pem) => Date.parse(new X509Certificate(pem).validFrom));
  return new Date(Math.max(...starts)).toISOString();
}

function trustedRootFor(
  fulcio: Fulcio,
  tsa: TimestampAuthority,
  rekor: Rekor | undefined,
): Record<string, unknown> {
  const root = (chain: readonly string[]) => chain[chain.length - 1] ?? '';
  return {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: rekor ? [rekor.trustedRootEntry] : [],
    certificateAuthorities: [
      {
        subject: subjectOf(root(fulcio.chainPem)),
        uri: fulcio.url,
        certChain: { certificates: fulcio.chainPem.map((pem) => ({ rawBytes: der(pem) })) },
        validFor: { start: validFrom(fulcio.chainPem) },
      },
    ],
    ctlogs: [],
    timestampAuthorities: [
      {
        subject: subjectOf(root(tsa.chainPem)),
        uri: tsa.timestampUrl,
        certChain: { certificates: tsa.chainPem.map((pem) => ({ rawBytes: der(pem) })) },
        validFor: { start: validFrom(tsa.chainPem) },
      },
    ],
  };
}

function signingConfigFor(
  issuer: OidcIssuer,
  fulcio: Fulcio,
  tsa: TimestampAuthority,
  rekor: Rekor | undefined,
): Record<string, unknown> {
  const service = (url: string, majorApiVersion = 1) => ({
    url,
    majorApiVersion,
    validFor: { start: '2020-01-01T00:00:00Z' },
    operator: 'signet-testbed',
  });
  return {
    mediaType: 'application/vnd.dev.sigstore.signingconfig.v0.2+json',
    caUrls: [service(fulcio.url)],
    oidcUrls: [service(issuer.url)],
    rekorTlogUrls: rekor ? [service(rekor.url, 2)] : [],
    rekorTlogConfig: { selector: 'ANY' },
    tsaUrls: [service(tsa.timestampUrl)],
    tsaConfig: { selector: 'ANY' },
  };
}
