import type { PullSecretLookup } from '../admission/pull-secret-keychain.js';
import type { KubeApi } from './kube-api.js';
import { statusOf } from './kube-errors.js';
import { apiJson } from './lists.js';

interface Cached<T> {
  readonly value: T;
  readonly expires: number;
}

/**
 * Reads pull secrets and ServiceAccounts with `get` (never list), caching answers briefly so a
 * burst of Pods of one workload costs one read. Every call is bounded by a timeout.
 */
export class KubePullSecretLookup implements PullSecretLookup {
  readonly #api: KubeApi;
  readonly #ttlMs: number;
  readonly #timeoutMs: number;
  readonly #cache = new Map<string, Cached<unknown>>();
  readonly #now: () => number;

  constructor(api: KubeApi, options: { ttlMs?: number; timeoutMs?: number; now?: () => number } = {}) {
    this.#api = api;
    this.#ttlMs = options.ttlMs ?? 30_000;
    this.#timeoutMs = options.timeoutMs ?? 3000;
    this.#now = options.now ?? Date.now;
  }

  secret(namespace: string, name: string): Promise<Record<string, unknown> | undefined> {
    return this.#cached(`secret/${namespace}/${name}`, async () => {
      try {
        const secret = await this.#api.core.readNamespacedSecret(
          { name, namespace },
          this.#api.deadline(this.#timeoutMs),
        );
        return { ...apiJson<Record<string, unknown>>(secret), kind: 'Secret' };
      } catch (error) {
        if (statusOf(error) === 404) return undefined;
        throw new Error(`cannot read pull secret ${namespace}/${name}`, { cause: error });
      }
    });
  }

  serviceAccountPullSecrets(namespace: string, name: string): Promise<string[]> {
    return this.#cached(`sa/${namespace}/${name}`, async () => {
      try {
        const account = await this.#api.core.readNamespacedServiceAccount(
          { name, namespace },
          this.#api.deadline(this.#timeoutMs),
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
