import { kindProvider } from './kind.js';
import { localProvider } from './local.js';
import type { ClusterProvider } from './provider.js';

export { type KindCluster, kindProvider } from './kind.js';
export { deployLocalSignet, localProvider } from './local.js';
export type { ClusterProvider, DeployedSignet, DeploySignetOptions } from './provider.js';
export type { TestCluster } from './test-cluster.js';

/** `E2E_PROVIDER`: `local` (default) or `kind`. */
export function providerFromEnv(env: NodeJS.ProcessEnv = process.env): ClusterProvider {
  const name = env.E2E_PROVIDER ?? 'local';
  if (name === 'local') return localProvider;
  if (name === 'kind') return kindProvider;
  throw new Error(`E2E_PROVIDER must be "local" or "kind", got ${JSON.stringify(name)}`);
}
