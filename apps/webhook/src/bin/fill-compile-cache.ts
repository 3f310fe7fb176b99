// Fills V8's compile cache with what `signet serve` loads, for an image: every module of this
// package (and so, through their imports, client-node, express, sigstore-js and the rest of the
// start's graph) and the registry client's HTTP path. The image runs it at build time as the user
// that runs Signet (Node keys the cache by user id) and points NODE_COMPILE_CACHE at the result, so
// a new Pod starts with the code cache a restarted container would have: about a quarter less
// CPU to its first admitted review. Nothing is evaluated but the modules' top levels; no command
// runs. Usage: node dist/bin/fill-compile-cache.js <directory>
import { readdirSync } from 'node:fs';
import { constants, enableCompileCache, flushCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';

const directory = process.argv[2];
if (!directory) {
  process.stderr.write('usage: fill-compile-cache.js <directory>\n');
  process.exit(2);
}
const cache = enableCompileCache(directory);
if (cache.status !== constants.compileCacheStatus.ENABLED) {
  process.stderr.write(`fill-compile-cache: ${cache.message ?? 'the compile cache is not enabled'}\n`);
  process.exit(1);
}

const dist = fileURLToPath(new URL('../', import.meta.url));
// The executable runs the CLI when imported; a worker's module expects its parent.
const modules = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter(
  (file) => file.endsWith('.js') && !file.startsWith('bin/') && !file.endsWith('-worker.js'),
);
for (const file of modules.sort()) await import(new URL(file, new URL('../', import.meta.url)).href);
// The registry client loads its part of undici when it first calls out.
const { createDispatcher } = await import('@signet/registry');
await (await createDispatcher()).close();
flushCompileCache();
process.stdout.write(
  `fill-compile-cache: ${modules.length} modules of @signet/webhook and their imports in ${cache.directory}\n`,
);
