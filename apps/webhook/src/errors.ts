/**
 * Input the user gave (a flag, a file, an object in it) cannot be used. The CLI prints the
 * message as one line, without a stack trace, and exits 2.
 */
export class InputError extends Error {
  override readonly name: string = 'InputError';
}

/** A command line that cannot be run as given: printed with a pointer to `--help`, exit 2. */
export class UsageError extends InputError {
  override readonly name: string = 'UsageError';
}

/**
 * No kubeconfig and no in-cluster ServiceAccount. The message says where a cluster is looked for;
 * the CLI adds what else the command can work from, in that command's own flags.
 */
export class NoClusterError extends InputError {
  override readonly name: string = 'NoClusterError';
  readonly code = 'NO_CLUSTER';
}

const SYSTEM_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EISDIR: 'is a directory, not a file',
  EADDRINUSE: 'address already in use',
  EADDRNOTAVAIL: 'address not available on this machine',
};

/**
 * The one line to print for an error a user can act on (an `InputError`, a missing file, a port in
 * use), or `undefined` for anything else, which is a bug and keeps its stack trace.
 */
export function userMessage(error: unknown): string | undefined {
  if (error instanceof InputError) return error.message;
  const system = error as { code?: unknown; path?: unknown; address?: unknown; port?: unknown };
  const known = typeof system.code === 'string' ? SYSTEM_ERRORS[system.code] : undefined;
  if (known === undefined) return undefined;
  if (typeof system.path === 'string') return `${system.path}: ${known}`;
  if (system.port !== undefined) return `${String(system.address ?? '')}:${String(system.port)}: ${known}`;
  return known;
}
