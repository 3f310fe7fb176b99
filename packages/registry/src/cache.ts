// A small bounded cache whose entries expire: registry tokens (valid for `expires_in`) and what
// each registry's challenge looked like. Bounded so a stream of distinct repositories cannot grow
// memory without end; the least recently used entry goes first.
import type { Clock } from './clock.js';

export class ExpiringCache<V> {
  readonly #entries = new Map<string, { readonly value: V; readonly expiresAt: number }>();
  readonly #maxEntries: number;
  readonly #clock: Clock;

  constructor(options: { readonly maxEntries: number; readonly clock: Clock }) {
    this.#maxEntries = Math.max(1, options.maxEntries);
    this.#clock = options.clock;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value, or `undefined` when absent or expired. A hit becomes the most recently used. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    if (entry.expiresAt <= this.#clock.now()) return undefined;
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Stores `value` until `expiresAt` (clock time); an already expired value is not stored. */
  set(key: string, value: V, expiresAt: number): void {
    this.#entries.delete(key);
    if (expiresAt <= this.#clock.now()) return;
    if (this.#entries.size >= this.#maxEntries) {
      for (const oldest of this.#entries.keys()) {
        this.#entries.delete(oldest);
        break;
      }
    }
    this.#entries.set(key, { value, expiresAt });
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }
}
