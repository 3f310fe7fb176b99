#!/usr/bin/env node
import { main } from '../cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
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
