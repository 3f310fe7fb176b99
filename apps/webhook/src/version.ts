import { createRequire } from 'node:module';

/** Signet's version: the webhook package's (also `signet --version` and `signet_build_info`). */
export function version(): string {
  const pkg = createRequire(import.meta.url)('../package.json') as { version: string };
  return pkg.version;
}
