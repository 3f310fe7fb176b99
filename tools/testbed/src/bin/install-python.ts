#!/usr/bin/env node
// Installs (or finds cached) the pinned Python packages the tests run, one progress line at a time:
//   pnpm --filter @signet/testbed install-python [moto tuf]     (no names: all of them)
import { ensurePythonPackage, PYTHON_PACKAGES, type PythonPackageName } from '../python.js';

const known = Object.keys(PYTHON_PACKAGES) as PythonPackageName[];

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((arg) => arg !== '--');
  const unknown = args.filter((arg) => !(known as string[]).includes(arg));
  if (unknown.length > 0)
    throw new Error(`unknown package ${unknown.join(', ')}; known: ${known.join(', ')}`);
  const names = args.length > 0 ? (args as PythonPackageName[]) : known;
  const started = Date.now();
  for (const name of names) {
    const install = await ensurePythonPackage(name, {
      onProgress: (line) => console.log(`install-python: ${line}`),
    });
    console.log(`install-python: ${name} ready at ${install.path}`);
  }
  console.log(
    `install-python: ${names.length} packages ready in ${Math.round((Date.now() - started) / 1000)}s`,
  );
}

main().catch((error: unknown) => {
  console.error(`install-python: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
