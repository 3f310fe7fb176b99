import { PatchStrategy, setHeaderOptions, type V1Secret } from '@kubernetes/client-node';
import {
  createCertificateAuthority,
  type IssuedCertificate,
  issueServingCertificate,
  renewalTime,
} from '../certificates.js';
import type { Part } from '../lifecycle/part.js';
import type { Logger } from '../logger.js';
import type { CertificatePair } from '../tls.js';
import type { KubeApi } from './kube-api.js';
import { statusOf } from './kube-errors.js';

interface WebhookConfiguration {
  readonly webhooks?: { readonly clientConfig: { readonly caBundle?: string } }[];
}

/** Every call of a reconcile pass has this deadline. */
const CALL_TIMEOUT_MS = 5000;

export interface SelfManagedTlsOptions {
  readonly api: KubeApi;
  readonly logger: Logger;
  readonly namespace: string;
  readonly secretName: string;
  /** Service the API server calls; its DNS names go into the serving certificate. */
  readonly serviceName: string;
  /** Name of the Validating/MutatingWebhookConfiguration whose caBundle is kept in step. */
  readonly webhookName: string;
  readonly onCertificate: (pair: CertificatePair) => void;
  readonly caValidDays?: number;
  readonly certValidDays?: number;
  /** How often the Secret is re-read and expiry checked (default 5 minutes). */
  readonly checkEveryMs?: number;
  readonly now?: () => Date;
}

interface Material {
  readonly ca: IssuedCertificate;
  readonly serving: IssuedCertificate;
  /** PEM CA bundle for the webhook configurations (may hold the previous CA during a rotation). */
  readonly bundle: string;
}

const KEYS = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  cert: 'tls.crt',
  key: 'tls.key',
  bundle: 'ca-bundle.crt',
} as const;

/**
 * Keeps a CA and a serving certificate in a Secret, shared by all replicas, renews both after
 * two thirds of their lifetime (the bundle keeps the old CA during a CA rotation, so no API server
 * call fails in between), and patches the caBundle of Signet's webhook configurations to match.
 */
export class SelfManagedTls implements Part {
  readonly name = 'self-managed TLS';
  readonly #o: SelfManagedTlsOptions;
  readonly #api: KubeApi;
  #timer: NodeJS.Timeout | undefined;
  #material: Material | undefined;

  constructor(options: SelfManagedTlsOptions) {
    this.#o = options;
    this.#api = options.api;
  }

  /** Ensures valid material exists and returns the serving pair; then keeps it fresh. */
  async start(): Promise<CertificatePair> {
    const material = await this.reconcile();
    this.#timer = setInterval(() => {
      this.reconcile().catch((error: unknown) =>
        this.#o.logger.error({ err: error }, 'TLS reconcile failed'),
      );
    }, this.#o.checkEveryMs ?? 300_000);
    this.#timer.unref();
    return { cert: material.serving.cert, key: material.serving.key };
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** The serving pair in use (after `start`). */
  get current(): CertificatePair {
    if (this.#material === undefined) throw new Error('self-managed TLS is not started');
    return { cert: this.#material.serving.cert, key: this.#material.serving.key };
  }

  /** One pass: read, renew what is due, write, patch the webhook configurations. */
  async reconcile(): Promise<Material> {
    const now = this.#o.now?.() ?? new Date();
    const stored = await this.#read();
    let material = stored;
    if (!material || renewalTime(material.ca.cert) <= now) {
      const ca = await createCertificateAuthority(
        `signet-webhook-ca.${this.#o.namespace}`,
        this.#o.caValidDays ?? 1825,
        now,
      );
      const bundle = material ? `${ca.cert.trim()}\n${material.ca.cert.trim()}\n` : ca.cert;
      material = { ca, serving: await this.#issue(ca, now), bundle };
    } else if (renewalTime(material.serving.cert) <= now) {
      material = { ...material, serving: await this.#issue(material.ca, now) };
    }
    if (material !== stored) material = await this.#write(material, stored !== undefined);
    await this.#patchWebhooks(material.bundle);
    if (this.#material?.serving.cert !== material.serving.cert) {
      this.#material = material;
      this.#o.onCertificate({ cert: material.serving.cert, key: material.serving.key });
    }
    return material;
  }

  #issue(ca: IssuedCertificate, now: Date): Promise<IssuedCertificate> {
    const { serviceName: s, namespace: n } = this.#o;
    return issueServingCertificate(
      ca,
      [`${s}.${n}.svc`, `${s}.${n}.svc.cluster.local`, `${s}.${n}`, s],
      this.#o.certValidDays ?? 365,
      now,
    );
  }

  async #read(): Promise<Material | undefined> {
    const { namespace, secretName: name } = this.#o;
    let secret: V1Secret;
    try {
      secret = await this.#api.core.readNamespacedSecret(
        { name, namespace },
        this.#api.deadline(CALL_TIMEOUT_MS),
      );
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw new Error(`cannot read TLS Secret ${this.#o.namespace}/${this.#o.secretName}`, { cause: error });
    }
    const data = secret.data ?? {};
    const get = (key: string) => (data[key] ? Buffer.from(data[key], 'base64').toString('utf8') : '');
    if (!get(KEYS.caCert) || !get(KEYS.caKey) || !get(KEYS.cert) || !get(KEYS.key)) return undefined;
    const farFuture = new Date(8.64e15);
    return {
      ca: { cert: get(KEYS.caCert), key: get(KEYS.caKey), notAfter: farFuture },
      serving: { cert: get(KEYS.cert), key: get(KEYS.key), notAfter: farFuture },
      bundle: get(KEYS.bundle) || get(KEYS.caCert),
    };
  }

  /** Writes the material; when another replica won the race, takes theirs instead. */
  async #write(material: Material, exists: boolean): Promise<Material> {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: this.#o.secretName,
        namespace: this.#o.namespace,
        labels: { 'app.kubernetes.io/name': 'signet' },
      },
      type: 'Opaque',
      data: {
        [KEYS.caCert]: b64(material.ca.cert),
        [KEYS.caKey]: b64(material.ca.key),
        [KEYS.cert]: b64(material.serving.cert),
        [KEYS.key]: b64(material.serving.key),
        [KEYS.bundle]: b64(material.bundle),
      },
    };
    const { secretName: name, namespace } = this.#o;
    try {
      if (exists)
        await this.#api.core.replaceNamespacedSecret(
          { name, namespace, body },
          this.#api.deadline(CALL_TIMEOUT_MS),
        );
      else
        await this.#api.core.createNamespacedSecret({ namespace, body }, this.#api.deadline(CALL_TIMEOUT_MS));
      this.#o.logger.info(
        { secret: `${namespace}/${name}`, notAfter: material.serving.notAfter },
        'issued a serving certificate',
      );
      return material;
    } catch (error) {
      if (statusOf(error) === 409) {
        const theirs = await this.#read();
        if (theirs) return theirs;
      }
      throw new Error(`cannot write TLS Secret ${namespace}/${name}`, { cause: error });
    }
  }

  async #patchWebhooks(bundle: string): Promise<void> {
    const caBundle = Buffer.from(bundle).toString('base64');
    const name = this.#o.webhookName;
    const admission = this.#api.admissionRegistration;
    const timeout = this.#api.deadline(CALL_TIMEOUT_MS);
    const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, timeout);
    const kinds = [
      {
        kind: 'ValidatingWebhookConfiguration',
        read: () => admission.readValidatingWebhookConfiguration({ name }, timeout),
        patch: (body: object[]) => admission.patchValidatingWebhookConfiguration({ name, body }, jsonPatch),
      },
      {
        kind: 'MutatingWebhookConfiguration',
        read: () => admission.readMutatingWebhookConfiguration({ name }, timeout),
        patch: (body: object[]) => admission.patchMutatingWebhookConfiguration({ name, body }, jsonPatch),
      },
    ];
    for (const { kind, read, patch } of kinds) {
      try {
        const config: WebhookConfiguration = await read();
        const ops = (config.webhooks ?? []).flatMap((hook, i) =>
          hook.clientConfig.caBundle === caBundle
            ? []
            : [{ op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle }],
        );
        if (ops.length > 0) {
          await patch(ops);
          this.#o.logger.info({ kind, name }, 'patched the webhook caBundle');
        }
      } catch (error) {
        if (statusOf(error) === 404) continue;
        throw new Error(`cannot update the caBundle of ${kind} ${name}`, { cause: error });
      }
    }
  }
}
