#!/usr/bin/env node
import { enableCompileCache } from 'node:module';

// V8's code cache for Signet's modules (NODE_COMPILE_CACHE, else the OS temp directory): a restart
// compiles nothing it compiled before, which cuts module loading by about a quarter. It must be on
// before the first import of Signet's own code, hence the dynamic import below. Off with
// NODE_DISABLE_COMPILE_CACHE=1; a read-only directory only means no cache.
enableCompileCache();
const { main } = await import('../cli/main.js');

/** Resolves once everything written to `stream` so far has been handed to the OS. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write('', () => resolve()));
}

main(process.argv.slice(2)).then(
  async (code) => {
    // Output to a pipe is written asynchronously: exiting at once would cut a long report short.
    await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
    // Watches and sockets may hold the event loop; the command is done, so is the process.
    process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(
      `signet: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
