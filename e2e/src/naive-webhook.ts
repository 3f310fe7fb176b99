// TEST FIXTURE, NOT SIGNET. A deliberately naive image-signature webhook that behaves like sigstore
// policy-controller before its fix: it verifies every image of every CREATE and UPDATE of the
// registered kinds, including the deployment controller's scale-down of an old ReplicaSet, and
// denies when verification fails. Scenarios run it as the negative control that proves they
// reproduce the stuck rollout.
import { appendFileSync } from 'node:fs';
import type { AdmissionRequest } from '@signet/k8s-types';
import { imagesOf, pathString, podSpecOf, workloadForKind } from '@signet/k8s-types';
import type { Cosign } from '@signet/testbed';
import {
  createAdmissionApp,
  createCertificateAuthority,
  createLogger,
  createOpsApp,
  issueServingCertificate,
  type Logger,
  type ReviewHandler,
  type ReviewOutcome,
  SignetMetrics,
  startServers,
  webhookConfigurations,
} from '@signet/webhook';
import { type AdmissionRecord, readAdmissionLog } from './webhooks/admission-log.js';
import type { WebhookUnderTest } from './webhooks/webhook-under-test.js';

export interface NaiveWebhookOptions {
  /** The pinned cosign (testbed's wrapper); every verification is a real `cosign verify`. */
  readonly cosign: Cosign;
  /** PEM public key file the images must be signed with (`cosign.pub`): the fixture's whole "policy". */
  readonly publicKey: string;
  /** JSON-lines log of every admission and verification. */
  readonly logFile: string;
  /** Name of the webhook configuration (default `naive-policy-controller`). */
  readonly name?: string;
  /**
   * Address to listen on and to name in the registration (default 127.0.0.1). A kind cluster's API
   * server reaches the host on its address on the kind network.
   */
  readonly host?: string;
  /** Port to listen on (default: any free one). */
  readonly port?: number;
  /** The API server's timeout for one review (default 20 s; a cold `cosign verify` takes ~1 s). */
  readonly timeoutSeconds?: number;
  /** Reuse a digest's verification for the whole run (default true); false: verify every request. */
  readonly cache?: boolean;
}

export interface NaiveWebhook extends WebhookUnderTest {
  /** `https://<host>:PORT` */
  readonly url: string;
  /** base64 PEM of the CA that signed the serving certificate, for `caBundle`. */
  readonly caBundle: string;
  /** How many `cosign verify` runs happened (the cache answers repeats). */
  readonly cosignRuns: () => number;
  stop(): Promise<void>;
}

/**
 * No transparency log (the test key's signatures were never uploaded) and plain-HTTP loopback
 * registries. cosign 3 looks for a bundle referrer first and falls back to the legacy `.sig` tag.
 */
const VERIFY_FLAGS = ['--insecure-ignore-tlog=true', '--allow-http-registry', '--allow-insecure-registry'];

type Verdict = { readonly verified: true } | { readonly verified: false; readonly reason: string };

/**
 * `cosign verify --key` with a cache by digest (a digest's signatures do not change during a test),
 * or without one, as policy-controller verifies every request (`cache: false`).
 */
class KeyedCosignVerification {
  readonly #cosign: Cosign;
  readonly #publicKey: string;
  readonly #logger: Logger;
  readonly #cache = new Map<string, Promise<Verdict>>();
  readonly #caching: boolean;
  runs = 0;

  constructor(cosign: Cosign, publicKey: string, logger: Logger, caching = true) {
    this.#cosign = cosign;
    this.#publicKey = publicKey;
    this.#logger = logger;
    this.#caching = caching;
  }

  verify(image: string): Promise<Verdict> {
    // Only a digest names fixed content; a tag is verified afresh each time.
    if (!this.#caching || !/@sha256:[0-9a-f]{64}$/.test(image)) return this.#run(image);
    let verdict = this.#cache.get(image);
    if (!verdict) {
      verdict = this.#run(image);
      this.#cache.set(image, verdict);
    }
    return verdict;
  }

  async #run(image: string): Promise<Verdict> {
    this.runs += 1;
    const started = Date.now();
    try {
      await this.#cosign.run(['verify', '--key', this.#publicKey, ...VERIFY_FLAGS, image]);
      this.#logger.info({ image, durationMs: Date.now() - started }, 'cosign verify: verified');
      return { verified: true };
    } catch (error) {
      const reason = cosignReason(error);
      this.#logger.info({ image, durationMs: Date.now() - started, reason }, 'cosign verify: failed');
      return { verified: false, reason };
    }
  }
}

/** The line of cosign's output that says why (`Error: no signatures found`), without the command line. */
function cosignReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const lines = message.split('\n').map((line) => line.trim());
  const errorLine =
    lines.find((line) => line.startsWith('Error:')) ?? lines.filter(Boolean).at(-1) ?? message;
  return errorLine.replace(/^Error:\s*/, '');
}

function naiveHandler(verification: KeyedCosignVerification): ReviewHandler {
  return async (endpoint, request: AdmissionRequest): Promise<ReviewOutcome> => {
    const allow = (rule: string): ReviewOutcome => ({
      response: { allowed: true },
      decision: 'allowed',
      rule,
    });
    if (endpoint !== 'validate' || request.object === null) return allow('not-verified');
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow('not-verified');
    const workload = workloadForKind(request.kind.group, request.kind.kind);
    if (!workload) return allow('not-a-workload');
    // The naive part: the whole new object is verified, whatever changed and whoever asked.
    const images = imagesOf(podSpecOf(workload, request.object), pathString(workload.podSpecPath));
    const failures: string[] = [];
    for (const at of images) {
      const verdict = await verification.verify(at.image);
      if (!verdict.verified) failures.push(`${at.image} (${verdict.reason}) at ${at.path}`);
    }
    if (failures.length === 0) return allow('verified');
    const message = `no matching signatures: ${failures.join('; ')}`;
    return {
      response: { allowed: false, status: { code: 403, reason: 'Forbidden', message } },
      decision: 'denied',
      rule: 'policy',
      reason: message,
    };
  };
}

/** Starts the naive fixture on a free port (loopback unless `host` says otherwise) with a fresh CA. */
export async function startNaiveWebhook(options: NaiveWebhookOptions): Promise<NaiveWebhook> {
  const logger = createLogger({
    level: 'info',
    destination: { write: (line: string) => appendFileSync(options.logFile, line) },
  });
  const ca = await createCertificateAuthority('naive-webhook-ca', 1);
  const host = options.host ?? '127.0.0.1';
  const serving = await issueServingCertificate(ca, [...new Set([host, '127.0.0.1', 'localhost'])], 1);
  const metrics = new SignetMetrics({ defaultMetrics: false });
  const verification = new KeyedCosignVerification(
    options.cosign,
    options.publicKey,
    logger,
    options.cache !== false,
  );
  const servers = await startServers({
    admissionApp: createAdmissionApp({ handler: naiveHandler(verification), logger, metrics }).listener,
    opsApp: createOpsApp(metrics, { ready: () => ({ ready: true }) }),
    certificate: { cert: serving.cert, key: serving.key },
    port: options.port ?? 0,
    opsPort: 0,
    host,
    opsHost: '127.0.0.1',
    logger,
  });
  const url = `https://${host}:${servers.port}`;
  const caBundle = Buffer.from(ca.cert).toString('base64');
  return {
    name: 'naive policy-controller (fixture)',
    logFile: options.logFile,
    url,
    caBundle,
    cosignRuns: () => verification.runs,
    configurations: () =>
      webhookConfigurations({
        name: options.name ?? 'naive-policy-controller',
        endpoint: { url },
        caBundle,
        namespace: 'signet-system',
        mutating: false,
        timeoutSeconds: options.timeoutSeconds ?? 20,
      }),
    admissions: (): Promise<AdmissionRecord[]> => readAdmissionLog(options.logFile),
    stop: () => servers.close(1_000),
  };
}
