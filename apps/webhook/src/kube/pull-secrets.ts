import type { PullSecretLookup } from '../admission/credentials.js';
import { type KubeClient, statusOf } from './client.js';

interface Cached<T> {
  readonly value: T;
  readonly expires: number;
}

/**
 * Reads pull secrets and ServiceAccounts with `get` (never list), caching answers briefly so a
 * burst of Pods of one workload costs one read. Every call is bounded by a timeout.
 */
export class KubePullSecretLookup implements PullSecretLookup {
  readonly #client: KubeClient;
  readonly #ttlMs: number;
  readonly #timeoutMs: number;
  readonly #cache = new Map<string, Cached<unknown>>();
  readonly #now: () => number;

  constructor(client: KubeClient, options: { ttlMs?: number; timeoutMs?: number; now?: () => number } = {}) {
    this.#client = client;
    this.#ttlMs = options.ttlMs ?? 30_000;
    this.#timeoutMs = options.timeoutMs ?? 3000;
    this.#now = options.now ?? Date.now;
  }

  secret(namespace: string, name: string): Promise<Record<string, unknown> | undefined> {
    return this.#cached(`secret/${namespace}/${name}`, async () => {
      try {
        const secret = await this.#client.get<Record<string, unknown>>(
          `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`,
          { timeoutMs: this.#timeoutMs },
        );
        return { ...secret, kind: 'Secret' };
      } catch (error) {
        if (statusOf(error) === 404) return undefined;
        throw new Error(`cannot read pull secret ${namespace}/${name}`, { cause: error });
      }
    });
  }

  serviceAccountPullSecrets(namespace: string, name: string): Promise<string[]> {
    return this.#cached(`sa/${namespace}/${name}`, async () => {
      try {
        const account = await this.#client.get<{ imagePullSecrets?: { name?: string }[] }>(
          `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(name)}`,
          { timeoutMs: this.#timeoutMs },
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
