// Signet's two ports as one part: the HTTP layer (express, loaded by `signet serve` only), the
// admission app on the HTTPS port and the operations app (health, readiness, metrics) on the plain
// one. It owns readiness (ready once policies are installed, until a shutdown begins), puts each
// new serving certificate and client CA bundle into the running server, and on stop lets in-flight
// reviews finish within the grace given.
import type { Admission } from './admission/assemble-admission.js';
import type { ServeConfig } from './config.js';
import type { ReviewHandler } from './http/review.js';
import type { Part } from './lifecycle/part.js';
import type { Logger } from './logger.js';
import type { SignetMetrics } from './metrics.js';
import { type ClientAuth, type RunningServers, startServers } from './server.js';
import { type CertificatePair, certificateExpirySeconds } from './tls.js';

/** The HTTP layer, loaded lazily: `signet verify` and `signet audit` never pay for express. */
export async function loadHttpLayer() {
  const [admission, ops] = await Promise.all([
    import('./http/admission-app.js'),
    import('./http/ops-app.js'),
  ]);
  return { createAdmissionApp: admission.createAdmissionApp, createOpsApp: ops.createOpsApp };
}

export type HttpLayer = Awaited<ReturnType<typeof loadHttpLayer>>;

type AdmissionApp = ReturnType<HttpLayer['createAdmissionApp']>;

export interface PortsOptions {
  /** Started at the beginning of start-up and awaited here, so that its load overlaps the rest. */
  readonly http: Promise<HttpLayer>;
  readonly admission: Admission;
  /** `POST /validate-policy`. */
  readonly policyHandler: ReviewHandler;
  /** The serving certificate in use when the ports open (later ones come through `setCertificate`). */
  readonly certificate: { readonly current: CertificatePair };
  readonly clientAuth: ClientAuth | undefined;
  readonly config: Pick<
    ServeConfig,
    'port' | 'opsPort' | 'host' | 'opsHost' | 'maxConnections' | 'maxConnectionsPerSource' | 'maxRequestBytes'
  >;
  readonly logger: Logger;
  /** Where the per-review `admission` line goes. */
  readonly admissionLog: Logger;
  readonly metrics: SignetMetrics;
}

export class Ports implements Part {
  readonly name = 'admission and operations ports';
  readonly #options: PortsOptions;
  #app: AdmissionApp | undefined;
  #servers: RunningServers | undefined;
  #shuttingDown = false;

  constructor(options: PortsOptions) {
    this.#options = options;
  }

  /** The listening servers (after `start`). */
  get servers(): RunningServers {
    if (this.#servers === undefined) throw new Error('the ports are not open');
    return this.#servers;
  }

  async start(): Promise<void> {
    const { admission, metrics, config, logger } = this.#options;
    metrics.reportReadiness(() => this.#readiness().ready);
    const http = await this.#options.http;
    const app = http.createAdmissionApp({
      handler: admission.service.review,
      quickHandler: admission.service.quick,
      policyHandler: this.#options.policyHandler,
      logger,
      admissionLog: this.#options.admissionLog,
      metrics,
      bodyLimitBytes: config.maxRequestBytes,
    });
    this.#app = app;
    const certificate = this.#options.certificate.current;
    // The expiry metric is set where a certificate is put in the server (an expired one with
    // failurePolicy Fail blocks every covered write): here, and at each rotation.
    metrics.servingCertificateExpiry.set(certificateExpirySeconds(certificate.cert));
    try {
      this.#servers = await startServers({
        admissionApp: app.listener,
        opsApp: http.createOpsApp(metrics, { ready: () => this.#readiness() }),
        certificate,
        port: config.port,
        opsPort: config.opsPort,
        host: config.host,
        opsHost: config.opsHost,
        maxConnections: config.maxConnections,
        maxConnectionsPerSource: config.maxConnectionsPerSource,
        clientAuth: this.#options.clientAuth,
        metrics,
        logger,
      });
    } catch (error) {
      await app.close();
      throw error;
    }
  }

  /** A renewed serving certificate, for new connections (ignored before the ports open). */
  setCertificate(pair: CertificatePair): void {
    if (this.#servers === undefined) return;
    this.#servers.setCertificate(pair);
    this.#options.metrics.servingCertificateExpiry.set(certificateExpirySeconds(pair.cert));
  }

  /** A changed client CA bundle, for new connections. */
  setClientCa(ca: string): void {
    this.#servers?.setClientCa(ca);
  }

  /** Readiness turns false at once (a shutdown or a stop began); reviews are still answered. */
  notReady(): void {
    this.#shuttingDown = true;
  }

  /**
   * Every answer from now on closes its connection, so the API server reconnects through the
   * Service to a ready replica. Idle kept-alive connections are left alone: closing one as the
   * client reuses it fails that review (HTTP/1.1 has no way to announce it), while the next answer
   * on it closes it cleanly.
   */
  drain(): void {
    this.notReady();
    this.#app?.drain();
  }

  /** Stops accepting, lets in-flight reviews finish (up to `graceMs`), then closes everything. */
  async stop(graceMs: number): Promise<void> {
    this.notReady();
    await this.#servers?.close(graceMs);
    await this.#app?.close();
  }

  #readiness() {
    if (this.#shuttingDown) return { ready: false, reason: 'shutting down' };
    return this.#options.admission.store.current
      ? { ready: true }
      : { ready: false, reason: 'policies not loaded yet' };
  }
}
