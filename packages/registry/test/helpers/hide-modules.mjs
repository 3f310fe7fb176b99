// Loaded with `node --import`: the packages named in SIGNET_HIDE_MODULES (comma-separated) cannot
// be resolved, as when they are not installed (Node itself throws its ERR_MODULE_NOT_FOUND), and
// Node runs this package's TypeScript sources (whose `./x.js` specifiers name `./x.ts` files).
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

const hidden = new Set((process.env.SIGNET_HIDE_MODULES ?? '').split(',').filter(Boolean));

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (hidden.has(specifier)) return nextResolve(`${specifier}-not-installed`, context);
    if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
      const source = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
      if (existsSync(fileURLToPath(source))) return nextResolve(source.href, context);
    }
    return nextResolve(specifier, context);
  },
});
