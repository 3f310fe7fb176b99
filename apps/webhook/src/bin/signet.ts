#!/usr/bin/env node
import { main } from '../cli/main.js';

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
