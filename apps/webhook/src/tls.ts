import { createHash, X509Certificate } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { dirname } from 'node:path';
import { InputError } from './errors.js';
import type { Logger } from './logger.js';

export interface CertificatePair {
  readonly cert: string;
  readonly key: string;
}

/** When a PEM certificate (the first of a chain) expires, in Unix seconds. */
export function certificateExpirySeconds(pem: string): number {
  return Date.parse(new X509Certificate(pem).validTo) / 1000;
}

/** Reads and checks a certificate/key pair: a clear error instead of a TLS handshake failure later. */
export function readCertificatePair(certFile: string, keyFile: string): CertificatePair {
  const cert = readFileSync(certFile, 'utf8');
  const key = readFileSync(keyFile, 'utf8');
  let parsed: X509Certificate;
  try {
    parsed = new X509Certificate(cert);
  } catch (error) {
    const hint = cert.includes('PRIVATE KEY-----')
      ? ' (it holds a private key: that goes to the key file)'
      : '';
    throw new InputError(`${certFile}: not a PEM certificate${hint}`, { cause: error });
  }
  if (!key.includes('PRIVATE KEY-----')) {
    const hint = key.includes('CERTIFICATE-----')
      ? ' (it holds a certificate: that goes to the certificate file)'
      : '';
    throw new InputError(`${keyFile}: not a PEM private key${hint}`);
  }
  if (Date.parse(parsed.validTo) < Date.now())
    throw new InputError(`${certFile}: certificate expired on ${parsed.validTo}`);
  return { cert, key };
}

export interface CertificateWatcherOptions {
  readonly certFile: string;
  readonly keyFile: string;
  readonly logger: Logger;
  /** Called with the new pair after a change was read and checked. */
  readonly onChange: (pair: CertificatePair) => void;
  /** Poll interval as a fallback for missed file events (default 30 s). */
  readonly pollMs?: number;
}

/**
 * Watches a certificate/key pair (a mounted Secret updates by swapping a symlinked directory, so
 * the directory is watched, with a poll as a fallback) and reports each new valid pair. A broken
 * update is logged and the previous pair stays in use.
 */
export class CertificateWatcher {
  readonly #options: CertificateWatcherOptions;
  #fingerprint: string;
  #watchers: FSWatcher[] = [];
  #poll: NodeJS.Timeout | undefined;
  #debounce: NodeJS.Timeout | undefined;

  constructor(options: CertificateWatcherOptions, initial: CertificatePair) {
    this.#options = options;
    this.#fingerprint = fingerprint(initial);
  }

  start(): void {
    const dirs = new Set([dirname(this.#options.certFile), dirname(this.#options.keyFile)]);
    for (const dir of dirs) {
      try {
        this.#watchers.push(watch(dir, () => this.#schedule()));
      } catch (error) {
        this.#options.logger.warn(
          { err: error, dir },
          'cannot watch the certificate directory; polling only',
        );
      }
    }
    this.#poll = setInterval(() => this.check(), this.#options.pollMs ?? 30_000);
    this.#poll.unref();
  }

  stop(): void {
    for (const watcher of this.#watchers) watcher.close();
    this.#watchers = [];
    clearInterval(this.#poll);
    clearTimeout(this.#debounce);
  }

  /** Re-reads the files now; returns whether a new pair was taken. */
  check(): boolean {
    let pair: CertificatePair;
    try {
      pair = readCertificatePair(this.#options.certFile, this.#options.keyFile);
    } catch (error) {
      this.#options.logger.error(
        { err: error },
        'serving certificate changed but cannot be used; keeping the previous one',
      );
      return false;
    }
    const next = fingerprint(pair);
    if (next === this.#fingerprint) return false;
    this.#fingerprint = next;
    try {
      this.#options.onChange(pair);
    } catch (error) {
      this.#options.logger.error(
        { err: error },
        'new serving certificate was rejected; keeping the previous one',
      );
      return false;
    }
    this.#options.logger.info({ certFile: this.#options.certFile }, 'serving certificate reloaded');
    return true;
  }

  #schedule(): void {
    clearTimeout(this.#debounce);
    this.#debounce = setTimeout(() => this.check(), 200);
    this.#debounce.unref();
  }
}

function fingerprint(pair: CertificatePair): string {
  return createHash('sha256').update(pair.cert).update('\0').update(pair.key).digest('hex');
}
