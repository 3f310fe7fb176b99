import { mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunResult, runCommand } from './exec.js';
import type { ToolProgress } from './go-build.js';
import { ensureTools } from './tools.js';

export interface CosignKeyPair {
  /** Encrypted PEM private key (`cosign.key`). */
  readonly privateKey: string;
  /** PEM public key (`cosign.pub`). */
  readonly publicKey: string;
  readonly password: string;
}

/**
 * Where a signature or attestation is stored.
 * - `legacy`: cosign's tag scheme, `sha256-<hex>.sig` / `.att` beside the image.
 * - `bundle`: a Sigstore bundle (v0.3, DSSE) in an OCI 1.1 referrer manifest whose `subject` is the
 *   image; on a registry without the referrers API it is listed in the `sha256-<hex>` fallback tag.
 */
export type SignatureFormat = 'legacy' | 'bundle';

export interface AttestOptions {
  readonly predicatePath: string;
  /** `slsaprovenance`, `spdxjson`, `custom`, ... or a predicate type URI. */
  readonly type: string;
  readonly format: SignatureFormat;
}

export interface SignOptions {
  /** `cosign sign --recursive`: an image index and every manifest it lists. */
  readonly recursive?: boolean;
}

const recursiveFlag = (options: SignOptions): string[] => (options.recursive ? ['--recursive'] : []);

// Loopback test registries speak plain HTTP.
const REGISTRY_FLAGS = ['--allow-http-registry', '--allow-insecure-registry'];

/**
 * Offline keyed signing, nothing uploaded to Rekor, no Fulcio, no TUF:
 * - legacy: `--tlog-upload=false --use-signing-config=false --new-bundle-format=false` (the first
 *   and last are deprecated in cosign 3, like the format itself);
 * - bundle: `--signing-config` naming a signing config with no services and `--trusted-root` naming
 *   an empty trusted root, both made by cosign itself (without `--trusted-root` cosign asks TUF).
 */
function offlineKeyedFlags(key: CosignKeyPair, offline: OfflineConfig | undefined): string[] {
  const format = offline
    ? ['--signing-config', offline.signingConfig, '--trusted-root', offline.trustedRoot]
    : ['--tlog-upload=false', '--use-signing-config=false', '--new-bundle-format=false'];
  return ['--key', key.privateKey, ...format, '--yes'];
}

/** Who signs keyless, and with which Sigstore: a token from its OIDC issuer and its files. */
export interface KeylessSigner {
  /**
   * A file holding an OIDC ID token for audience `sigstore` (see `OidcIssuer.mintToken`); a file,
   * not the token, so that it never shows in a command line or an error message.
   */
  readonly identityTokenFile: string;
  readonly fulcioUrl: string;
  /** `<tsa>/api/v1/timestamp`. */
  readonly timestampUrl: string;
  /** TrustedRoot JSON of the private Sigstore (cosign checks the certificate and timestamp it gets). */
  readonly trustedRoot: string;
  /** SigningConfig JSON naming its Fulcio and TSA and no Rekor. */
  readonly signingConfig: string;
}

/**
 * - bundle (cosign 3's default): the services come from `--signing-config`; it lists no Rekor, so
 *   nothing is logged; the bundle carries the certificate and the TSA's timestamp.
 * - legacy (`--new-bundle-format=false`): the services by flag, `--tlog-upload=false`; the `.sig`
 *   layer carries the certificate, its chain and the timestamp in annotations.
 */
function keylessFlags(signer: KeylessSigner, format: SignatureFormat): string[] {
  const identity = ['--identity-token', signer.identityTokenFile, '--trusted-root', signer.trustedRoot];
  const services =
    format === 'bundle'
      ? ['--signing-config', signer.signingConfig]
      : [
          ...['--fulcio-url', signer.fulcioUrl, '--timestamp-server-url', signer.timestampUrl],
          ...['--tlog-upload=false', '--use-signing-config=false', '--new-bundle-format=false'],
        ];
  return [...identity, ...services, '--yes'];
}

interface OfflineConfig {
  readonly signingConfig: string;
  readonly trustedRoot: string;
}

/**
 * Runs the pinned cosign with a private HOME (no user config or credentials, no TUF cache in the
 * real home) and a deadline on every command.
 */
export class Cosign {
  readonly binary: string;
  readonly home: string;
  readonly timeoutMs: number;
  #offline: Promise<OfflineConfig> | undefined;
  #bundles = 0;

  constructor(options: { readonly binary: string; readonly home: string; readonly timeoutMs?: number }) {
    this.binary = options.binary;
    this.home = options.home;
    this.timeoutMs = options.timeoutMs ?? 60_000;
  }

  /**
   * `extraEnv` reaches cosign on top of its private environment: a KMS's address and credentials
   * (`AWS_ENDPOINT_URL_KMS`, `VAULT_ADDR`, `VAULT_TOKEN`, ...), `SSL_CERT_FILE` for a test CA.
   */
  run(args: readonly string[], password = '', extraEnv: NodeJS.ProcessEnv = {}): Promise<RunResult> {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.home,
      DOCKER_CONFIG: join(this.home, '.docker'),
      TUF_ROOT: join(this.home, '.sigstore', 'root'),
      COSIGN_PASSWORD: password,
      ...extraEnv,
    };
    return runCommand(this.binary, args, { env, cwd: this.home, timeoutMs: this.timeoutMs });
  }

  /** `cosign generate-key-pair` into `dir` (`cosign.key`, `cosign.pub`), encrypted with `password`. */
  async generateKeyPair(dir: string, password: string): Promise<CosignKeyPair> {
    await mkdir(dir, { recursive: true });
    const prefix = join(dir, 'cosign');
    await this.run(['generate-key-pair', '--output-key-prefix', prefix], password);
    return { privateKey: `${prefix}.key`, publicKey: `${prefix}.pub`, password };
  }

  /**
   * Keyed signature in the legacy format: the `sha256-<hex>.sig` tag, simplesigning payload. With
   * `recursive`, an image index and each manifest it lists are signed (`--recursive`).
   */
  async signLegacyKeyed(
    imageDigestRef: string,
    key: CosignKeyPair,
    options: SignOptions = {},
  ): Promise<void> {
    const flags = [...(await this.#signingFlags(key, 'legacy')), ...recursiveFlag(options)];
    await this.run(['sign', ...flags, imageDigestRef], key.password);
  }

  /** Keyed signature as a Sigstore bundle attached as an OCI referrer (or the fallback tag); `recursive` as above. */
  async signBundleKeyed(
    imageDigestRef: string,
    key: CosignKeyPair,
    options: SignOptions = {},
  ): Promise<void> {
    const flags = [...(await this.#signingFlags(key, 'bundle')), ...recursiveFlag(options)];
    await this.run(['sign', ...flags, imageDigestRef], key.password);
  }

  /**
   * Signs with a KMS key (`awskms://...`, `hashivault://...`): the key never leaves the KMS.
   * Legacy format unless `format` says otherwise; `env` carries the KMS's address and credentials.
   */
  async signWithKms(
    imageDigestRef: string,
    keyUri: string,
    env: NodeJS.ProcessEnv,
    format: SignatureFormat = 'legacy',
  ): Promise<void> {
    const kmsKey: CosignKeyPair = { privateKey: keyUri, publicKey: keyUri, password: '' };
    await this.run(['sign', ...(await this.#signingFlags(kmsKey, format)), imageDigestRef], '', env);
  }

  /** `cosign import-key-pair` of a PEM private key (PKCS#8/SEC1) into cosign's format under `dir`. */
  async importKeyPair(pemPrivateKey: string, dir: string, password: string): Promise<CosignKeyPair> {
    await mkdir(dir, { recursive: true });
    const prefix = join(dir, 'imported');
    await this.run(['import-key-pair', '--key', pemPrivateKey, '--output-key-prefix', prefix], password);
    return { privateKey: `${prefix}.key`, publicKey: `${prefix}.pub`, password };
  }

  /** In-toto attestation of `predicatePath` with predicate `type`, signed by `key`. */
  async attest(imageDigestRef: string, key: CosignKeyPair, options: AttestOptions): Promise<void> {
    const flags = await this.#signingFlags(key, options.format);
    const predicate = ['--predicate', options.predicatePath, '--type', options.type];
    await this.run(['attest', ...flags, ...predicate, imageDigestRef], key.password);
  }

  /**
   * `cosign verify` with the public key and no transparency log; throws when verification fails.
   * cosign 3 finds bundle referrers first and falls back to the legacy `.sig` tag.
   */
  verify(imageDigestRef: string, publicKey: string): Promise<RunResult> {
    return this.run([
      'verify',
      '--key',
      publicKey,
      '--insecure-ignore-tlog',
      ...REGISTRY_FLAGS,
      imageDigestRef,
    ]);
  }

  /** `cosign verify-attestation` for predicate `type`; throws when verification fails. */
  verifyAttestation(imageDigestRef: string, publicKey: string, type: string): Promise<RunResult> {
    const flags = ['--key', publicKey, '--insecure-ignore-tlog', '--type', type, ...REGISTRY_FLAGS];
    return this.run(['verify-attestation', ...flags, imageDigestRef]);
  }

  /**
   * Keyed legacy signature pushed as cosign's experimental OCI 1.1 referrer (artifactType
   * `application/vnd.dev.cosign.artifact.sig.v1+json`, subject = the image) instead of the `.sig`
   * tag: `COSIGN_EXPERIMENTAL=1 ... --registry-referrers-mode=oci-1-1`.
   */
  async signLegacyKeyedOci11(imageDigestRef: string, key: CosignKeyPair): Promise<void> {
    const flags = [...(await this.#signingFlags(key, 'legacy')), '--registry-referrers-mode=oci-1-1'];
    await this.run(['sign', ...flags, imageDigestRef], key.password, { COSIGN_EXPERIMENTAL: '1' });
  }

  /**
   * The DSSE envelope of a keyed attestation, not uploaded: cosign 3's `attest --no-upload` prints
   * nothing, so the bundle is written with `--bundle` and its envelope taken out.
   */
  async attestationEnvelope(
    imageDigestRef: string,
    key: CosignKeyPair,
    options: AttestOptions,
  ): Promise<string> {
    const bundlePath = join(this.home, `envelope-${++this.#bundles}.sigstore.json`);
    const flags = [...(await this.#signingFlags(key, 'bundle')), '--no-upload', '--bundle', bundlePath];
    const predicate = ['--predicate', options.predicatePath, '--type', options.type];
    await this.run(['attest', ...flags, ...predicate, imageDigestRef], key.password);
    const bundle = JSON.parse(await readFile(bundlePath, 'utf8')) as { dsseEnvelope?: unknown };
    return JSON.stringify(bundle.dsseEnvelope);
  }

  /**
   * Keyless signature through a private Sigstore (see `startPrivateSigstore`): a certificate from its
   * Fulcio for `signer.identityToken`, an RFC 3161 timestamp from its TSA, no transparency log.
   */
  async signKeyless(
    imageDigestRef: string,
    signer: KeylessSigner,
    format: SignatureFormat,
    options: SignOptions = {},
  ): Promise<void> {
    const flags = [...keylessFlags(signer, format), ...recursiveFlag(options), ...REGISTRY_FLAGS];
    await this.run(['sign', ...flags, imageDigestRef]);
  }

  /** Keyless in-toto attestation of `options.predicatePath`, as `signKeyless` signs. */
  async attestKeyless(imageDigestRef: string, signer: KeylessSigner, options: AttestOptions): Promise<void> {
    const predicate = ['--predicate', options.predicatePath, '--type', options.type];
    const flags = keylessFlags(signer, options.format);
    await this.run(['attest', ...flags, ...predicate, ...REGISTRY_FLAGS, imageDigestRef]);
  }

  async #signingFlags(key: CosignKeyPair, format: SignatureFormat): Promise<string[]> {
    const offline = format === 'bundle' ? await this.#offlineConfig() : undefined;
    return [...offlineKeyedFlags(key, offline), ...REGISTRY_FLAGS];
  }

  /** A signing config without services and an empty trusted root, made once per HOME. */
  #offlineConfig(): Promise<OfflineConfig> {
    this.#offline ??= (async () => {
      const config = {
        signingConfig: join(this.home, 'offline-signing-config.json'),
        trustedRoot: join(this.home, 'empty-trusted-root.json'),
      };
      await this.run(['signing-config', 'create', '--out', config.signingConfig]);
      await this.run(['trusted-root', 'create', '--out', config.trustedRoot]);
      return config;
    })();
    return this.#offline;
  }
}

/** A `Cosign` on the pinned binary (built if missing) with a fresh HOME under `workDir` or the OS temp dir. */
export async function createCosign(
  options: {
    readonly workDir?: string;
    readonly timeoutMs?: number;
    readonly env?: NodeJS.ProcessEnv;
    readonly onProgress?: (event: ToolProgress) => void;
  } = {},
): Promise<Cosign> {
  const { cosign } = await ensureTools(['cosign'], {
    ...(options.env ? { env: options.env } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
  const home = await mkdtemp(join(options.workDir ?? tmpdir(), 'cosign-home-'));
  return new Cosign({ binary: cosign, home, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) });
}
