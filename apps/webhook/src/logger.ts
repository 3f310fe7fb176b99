import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';

export type { Logger } from 'pino';

/**
 * Fields that may carry secrets anywhere in a log object. Registry credentials, tokens, pull
 * secrets and private keys never reach the log, whatever code logged them.
 */
export const REDACTED_PATHS = [
  'password',
  '*.password',
  'token',
  '*.token',
  'auth',
  '*.auth',
  'identitytoken',
  '*.identitytoken',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'data',
  'secret.data',
  '*.secret.data',
  'privateKey',
  '*.privateKey',
  'key',
  'tls.key',
];

export interface LoggerSettings {
  readonly level?: string;
  /** Where lines go (default stdout, buffered); tests pass a stream to read them. */
  readonly destination?: DestinationStream;
}

/** The loggers of a running Signet: one for everything, and one for the per-review line. */
export interface Loggers {
  /** Secrets redacted wherever they appear, whatever code logged them. */
  readonly logger: Logger;
  /**
   * The one `admission` line per review: fixed fields that carry no secret (the deny text is what
   * the API server shows the user anyway), so it skips redaction, which costs more than the rest
   * of a cheap review's logging. Same destination and format.
   */
  readonly admissions: Logger;
}

/**
 * An error with a code (Signet's coded errors, Node's system errors, the API client's) is a
 * condition Signet anticipates: a dead registry, a policy that does not compile, a refused
 * request. It is logged as its type, code and message, with the messages of its causes, never a
 * stack trace. Any other error is a bug: logged with its stack.
 */
export function serializeError(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const code = (value as { code?: unknown }).code;
  if (typeof code !== 'string' && typeof code !== 'number') return pino.stdSerializers.err(value);
  const causes: string[] = [];
  let cause: unknown = value.cause;
  for (let depth = 0; depth < 5 && cause !== undefined && cause !== null; depth++) {
    causes.push(cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause));
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return {
    type: value.name,
    code: String(code),
    message: value.message,
    ...(causes.length > 0 ? { causes } : {}),
  };
}

function options(level: string, redact: boolean): LoggerOptions {
  return {
    level,
    base: { service: 'signet' },
    serializers: { err: serializeError },
    timestamp: pino.stdTimeFunctions.isoTime,
    ...(redact ? { redact: { paths: REDACTED_PATHS, censor: '[redacted]' } } : {}),
    formatters: { level: (label) => ({ level: label }) },
  };
}

/**
 * A destination that collects the lines of one event-loop turn and writes them with one system
 * call at its end: under load many reviews finish in a turn, and a system call per line was a
 * cheap review's costliest part; when idle a line is written as soon as its turn ends.
 */
export class TurnBufferedDestination implements DestinationStream {
  readonly #target: { write(data: string): unknown; flushSync?(): void };
  #chunks: string[] = [];
  #scheduled = false;

  constructor(target: { write(data: string): unknown; flushSync?(): void }) {
    this.#target = target;
  }

  write(line: string): void {
    this.#chunks.push(line);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(this.flush);
  }

  /** Writes what was collected now. */
  readonly flush = (): void => {
    this.#scheduled = false;
    if (this.#chunks.length === 0) return;
    const data = this.#chunks.length === 1 ? (this.#chunks[0] as string) : this.#chunks.join('');
    this.#chunks = [];
    this.#target.write(data);
  };
}

/** Standard output is one per process, and so is its buffer. */
let stdout: DestinationStream | undefined;

/** Standard output, a system call per event-loop turn (synchronous, so nothing is lost on exit). */
function bufferedStdout(): DestinationStream {
  if (stdout !== undefined) return stdout;
  const destination = new TurnBufferedDestination(pino.destination({ dest: 1, sync: true }));
  stdout = destination;
  process.once('exit', destination.flush);
  return destination;
}

/** JSON lines, one object per event, secrets redacted. */
export function createLogger(settings: LoggerSettings = {}): Logger {
  return pino(options(settings.level ?? 'info', true), settings.destination ?? bufferedStdout());
}

/** Both loggers, writing to one destination. */
export function createLoggers(settings: LoggerSettings = {}): Loggers {
  const destination = settings.destination ?? bufferedStdout();
  const level = settings.level ?? 'info';
  return {
    logger: pino(options(level, true), destination),
    admissions: pino(options(level, false), destination),
  };
}
