import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { PullSecretLookup } from '../admission/credentials.js';
import { statusOf, withTimeout } from './deadline.js';

interface Cached<T> {
  readonly value: T;
  readonly expires: number;
}

/**
 * Reads pull secrets and ServiceAccounts with `get` (never list), caching answers briefly so a
 * burst of Pods of one workload costs one read. Every call is bounded by a timeout.
 */
export class KubePullSecretLookup implements PullSecretLookup {
  readonly #core: CoreV1Api;
  readonly #ttlMs: number;
  readonly #timeoutMs: number;
  readonly #cache = new Map<string, Cached<unknown>>();
  readonly #now: () => number;

  constructor(
    kubeConfig: KubeConfig,
    options: { ttlMs?: number; timeoutMs?: number; now?: () => number } = {},
  ) {
    this.#core = kubeConfig.makeApiClient(CoreV1Api);
    this.#ttlMs = options.ttlMs ?? 30_000;
    this.#timeoutMs = options.timeoutMs ?? 3000;
    this.#now = options.now ?? Date.now;
  }

  secret(namespace: string, name: string): Promise<Record<string, unknown> | undefined> {
    return this.#cached(`secret/${namespace}/${name}`, async () => {
      try {
        const secret = await withTimeout(
          `reading Secret ${namespace}/${name}`,
          this.#timeoutMs,
          this.#core.readNamespacedSecret({ name, namespace }),
        );
        return { ...(secret as unknown as Record<string, unknown>), kind: 'Secret' };
      } catch (error) {
        if (statusOf(error) === 404) return undefined;
        throw new Error(`cannot read pull secret ${namespace}/${name}`, { cause: error });
      }
    });
  }

  serviceAccountPullSecrets(namespace: string, name: string): Promise<string[]> {
    return this.#cached(`sa/${namespace}/${name}`, async () => {
      try {
        const account = await withTimeout(
          `reading ServiceAccount ${namespace}/${name}`,
          this.#timeoutMs,
          this.#core.readNamespacedServiceAccount({ name, namespace }),
        );
        return (account.imagePullSecrets ?? []).flatMap((ref) => (ref.name ? [ref.name] : []));
      } catch (error) {
        if (statusOf(error) === 404) return [];
        throw new Error(`cannot read ServiceAccount ${namespace}/${name}`, { cause: error });
      }
    });
  }

  async #cached<T>(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.#cache.get(key);
    if (hit && hit.expires > this.#now()) return hit.value as T;
    const value = await load();
    if (this.#cache.size > 1000) this.#cache.clear();
    this.#cache.set(key, { value, expires: this.#now() + this.#ttlMs });
    return value;
  }
}
