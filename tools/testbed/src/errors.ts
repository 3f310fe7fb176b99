/** What went wrong, for callers that branch on it (never on message text). */
export type TestbedErrorCode =
  | 'GO_NOT_FOUND'
  | 'UNKNOWN_TOOL'
  | 'BUILD_FAILED'
  | 'BUILD_TIMEOUT'
  | 'COMMAND_FAILED'
  | 'COMMAND_TIMEOUT'
  | 'PROCESS_EXITED'
  | 'NOT_READY';

/** The one error type of `@signet/testbed`: a code, a message a person can act on, and the cause. */
export class TestbedError extends Error {
  readonly code: TestbedErrorCode;

  constructor(code: TestbedErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TestbedError';
    this.code = code;
  }
}

/** The last `lines` lines of `text`, for error messages that show what a program printed. */
export function tailLines(text: string, lines = 40): string {
  const all = text.trimEnd().split('\n');
  return all.slice(-lines).join('\n');
}
