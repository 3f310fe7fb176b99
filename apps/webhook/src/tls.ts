import { createHash, X509Certificate } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { dirname } from 'node:path';
import { InputError } from './errors.js';
import type { Part } from './lifecycle/part.js';
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

interface WatchedFilesOptions<T> {
  readonly files: readonly string[];
  /** Reads and checks the files; throws when they cannot be used. */
  readonly read: () => T;
  readonly fingerprint: (value: T) => string;
  readonly onChange: (value: T) => void;
  readonly logger: Logger;
  /** What the files hold, for the log (`serving certificate`, `client CA bundle`). */
  readonly what: string;
  readonly pollMs?: number;
}

/**
 * Watches files that a mounted Secret or ConfigMap updates (by swapping a symlinked directory, so
 * the directories are watched, with a poll as a fallback) and reports each new usable value. A
 * broken update is logged and the previous value stays in use.
 */
class WatchedFiles<T> implements Part {
  readonly #options: WatchedFilesOptions<T>;
  #current: T;
  #fingerprint: string;
  #watchers: FSWatcher[] = [];
  #poll: NodeJS.Timeout | undefined;
  #debounce: NodeJS.Timeout | undefined;

  constructor(options: WatchedFilesOptions<T>, initial: T) {
    this.#options = options;
    this.#current = initial;
    this.#fingerprint = options.fingerprint(initial);
  }

  get name(): string {
    return `${this.#options.what} watch`;
  }

  /** The value in use: the initial one, or the last change that was taken. */
  get current(): T {
    return this.#current;
  }

  start(): void {
    const dirs = new Set(this.#options.files.map((file) => dirname(file)));
    for (const dir of dirs) {
      try {
        this.#watchers.push(watch(dir, () => this.#schedule()));
      } catch (error) {
        this.#options.logger.warn(
          { err: error, dir },
          `cannot watch the ${this.#options.what} directory; polling only`,
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

  /** Re-reads the files now; returns whether a new value was taken. */
  check(): boolean {
    const { what, logger } = this.#options;
    let value: T;
    try {
      value = this.#options.read();
    } catch (error) {
      logger.error({ err: error }, `${what} changed but cannot be used; keeping the previous one`);
      return false;
    }
    const next = this.#options.fingerprint(value);
    if (next === this.#fingerprint) return false;
    this.#fingerprint = next;
    try {
      this.#options.onChange(value);
    } catch (error) {
      logger.error({ err: error }, `new ${what} was rejected; keeping the previous one`);
      return false;
    }
    this.#current = value;
    logger.info({ file: this.#options.files[0] }, `${what} reloaded`);
    return true;
  }

  #schedule(): void {
    clearTimeout(this.#debounce);
    this.#debounce = setTimeout(() => this.check(), 200);
    this.#debounce.unref();
  }
}

/** Watches a serving certificate/key pair and reports each new valid pair. */
export class CertificateWatcher extends WatchedFiles<CertificatePair> {
  constructor(options: CertificateWatcherOptions, initial: CertificatePair) {
    super(
      {
        files: [options.certFile, options.keyFile],
        read: () => readCertificatePair(options.certFile, options.keyFile),
        fingerprint,
        onChange: options.onChange,
        logger: options.logger,
        what: 'serving certificate',
        ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
      },
      initial,
    );
  }
}

/**
 * Reads a CA bundle for client certificates (PEM, one or more certificates): a clear error
 * instead of every caller refused later.
 */
export function readClientCa(file: string): string {
  const text = readFileSync(file, 'utf8');
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new InputError(`${file}: no PEM certificate`);
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw new InputError(`${file}: not a PEM certificate`, { cause: error });
    }
  }
  return blocks.join('\n');
}

export interface ClientCaWatcherOptions {
  readonly file: string;
  readonly logger: Logger;
  readonly onChange: (ca: string) => void;
  readonly pollMs?: number;
}

/** Watches the client CA bundle of `--client-ca-file` and reports each new valid bundle. */
export class ClientCaWatcher extends WatchedFiles<string> {
  constructor(options: ClientCaWatcherOptions, initial: string) {
    super(
      {
        files: [options.file],
        read: () => readClientCa(options.file),
        fingerprint: (ca) => createHash('sha256').update(ca).digest('hex'),
        onChange: options.onChange,
        logger: options.logger,
        what: 'client CA bundle',
        ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
      },
      initial,
    );
  }
}

function fingerprint(pair: CertificatePair): string {
  return createHash('sha256').update(pair.cert).update('\0').update(pair.key).digest('hex');
}
