// The process around `main`: the compile cache on before Signet's own modules load, output
// flushed, the exit code set, and a bug printed with its stack.
import { enableCompileCache } from 'node:module';

/** Resolves once everything written to `stream` so far has been handed to the OS. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write('', () => resolve()));
}

export async function runCli(argv: readonly string[]): Promise<void> {
  // V8's code cache for Signet's modules (NODE_COMPILE_CACHE, else the OS temp directory): a
  // restart compiles nothing it compiled before, which cuts module loading by about a quarter. It
  // must be on before the first import of Signet's own code, hence the dynamic import below. Off
  // with NODE_DISABLE_COMPILE_CACHE=1; a read-only directory only means no cache.
  enableCompileCache();
  const { main } = await import('../cli/main.js');
  try {
    const code = await main(argv);
    // Output to a pipe is written asynchronously: exiting at once would cut a long report short.
    await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
    // Watches and sockets may hold the event loop; the command is done, so is the process.
    process.exit(code);
  } catch (error) {
    process.stderr.write(
      `signet: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  }
}
