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
  /** Where lines go (default stdout); tests pass a stream to read them. */
  readonly destination?: DestinationStream;
}

/** JSON lines, one object per event, secrets redacted. */
export function createLogger(settings: LoggerSettings = {}): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? 'info',
    base: { service: 'signet' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
  };
  return settings.destination ? pino(options, settings.destination) : pino(options);
}
