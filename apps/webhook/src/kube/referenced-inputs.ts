// The Secrets and ConfigMaps that namespaces' ImagePolicies reference, read by name with `get`
// (never list, never watch: Signet's RBAC grants no more in a team's namespace, ADR 0028), read
// again on a schedule so that a rotated key is taken within that time. Each object kept is bounded
// in size, and so are their number and their total.
import { createHash } from 'node:crypto';
import type { Logger } from '../logger.js';
import { type InputReference, referenceKey } from '../policy/namespaced-references.js';
import type { KubeApi } from './kube-api.js';
import { statusOf } from './kube-errors.js';
import { apiJson } from './lists.js';

export interface ReferencedInputsOptions {
  readonly api: KubeApi;
  readonly logger: Logger;
  /** Called when what was read changed (an object appeared, changed, went, or became unreadable). */
  readonly onChange: () => void;
  /** How often every referenced object is read again (default 30 s, up to 10 % later). */
  readonly refreshMs?: number;
  /** Objects read at most (default 500); references beyond are not read, and said. */
  readonly maxObjects?: number;
  /** Largest object kept, its data's bytes (default 256 KiB): a key, a CA or a policy is smaller. */
  readonly maxObjectBytes?: number;
  /** All objects kept together (default 16 MiB). */
  readonly maxTotalBytes?: number;
  /** Deadline of one read (default 5 s). */
  readonly timeoutMs?: number;
  /** Reads at once (default 4). */
  readonly concurrency?: number;
  readonly random?: () => number;
}

/** A referenced object that Signet does not use, and why. */
export interface InputProblem {
  readonly reference: InputReference;
  readonly message: string;
}

/** Signet's own configuration's name: never taken from a team's namespace. */
const CONFIG_NAME = 'config-policy-controller';

interface Entry {
  readonly reference: InputReference;
  /** Read at least once since it was wanted. */
  read: boolean;
  /** The object as Signet uses it (data only), when it exists and is within the bounds. */
  object: Record<string, unknown> | undefined;
  bytes: number;
  problem: string | undefined;
  /** Never read (beyond the count, or a name Signet does not read): why. */
  readonly refused: string | undefined;
}

export class ReferencedInputs {
  readonly #options: ReferencedInputsOptions;
  readonly #entries = new Map<string, Entry>();
  /** Keys waiting to be read. */
  readonly #queue = new Set<string>();
  #pumping: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #fingerprint = '';
  /** A reference was read for the first time: its view is due, whatever it holds. */
  #firstRead = false;
  #started = false;
  #stopped = false;

  constructor(options: ReferencedInputsOptions) {
    this.#options = options;
  }

  /**
   * The references of the current ImagePolicies: new ones are read now, gone ones forgotten. True
   * when every one of them has been read (a view compiled now has all it needs).
   */
  want(references: readonly InputReference[]): boolean {
    const max = this.#options.maxObjects ?? 500;
    const wanted = new Map(references.map((r) => [referenceKey(r), r]));
    for (const key of this.#entries.keys()) if (!wanted.has(key)) this.#entries.delete(key);
    let index = 0;
    for (const [key, reference] of wanted) {
      index += 1;
      const refused = refusal(reference, index, max);
      const known = this.#entries.get(key);
      if (known !== undefined && known.refused === refused) continue;
      this.#entries.set(key, {
        reference,
        read: refused !== undefined,
        object: undefined,
        bytes: 0,
        problem: refused,
        refused,
      });
      if (refused === undefined) this.#queue.add(key);
    }
    if (this.#queue.size > 0) this.#pump();
    return [...this.#entries.values()].every((entry) => entry.read);
  }

  /** The objects read, as the API's JSON (kind, apiVersion, metadata, data), sorted. */
  objects(): Record<string, unknown>[] {
    return this.#sorted().flatMap((entry) => (entry.object ? [entry.object] : []));
  }

  /** References read but not used: too large, too many, refused by RBAC. */
  problems(): InputProblem[] {
    return this.#sorted().flatMap((entry) =>
      entry.problem === undefined ? [] : [{ reference: entry.reference, message: entry.problem }],
    );
  }

  #sorted(): Entry[] {
    return [...this.#entries.values()].sort(compareKeys);
  }

  /** Reads everything wanted again every `refreshMs`. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#queue.clear();
  }

  #schedule(): void {
    if (this.#stopped) return;
    const base = this.#options.refreshMs ?? 30_000;
    const delay = base * (1 + 0.1 * (this.#options.random ?? Math.random)());
    this.#timer = setTimeout(() => {
      for (const [key, entry] of this.#entries) if (entry.refused === undefined) this.#queue.add(key);
      this.#pump();
      this.#schedule();
    }, delay);
    this.#timer.unref();
  }

  #pump(): void {
    if (this.#pumping || this.#stopped) return;
    this.#pumping = this.#drain().finally(() => {
      this.#pumping = undefined;
      if (this.#queue.size > 0) this.#pump();
    });
  }

  async #drain(): Promise<void> {
    const workers = Math.max(1, this.#options.concurrency ?? 4);
    const next = (): string | undefined => {
      const [key] = this.#queue;
      if (key !== undefined) this.#queue.delete(key);
      return key;
    };
    await Promise.all(
      Array.from({ length: workers }, async () => {
        for (let key = next(); key !== undefined && !this.#stopped; key = next()) await this.#read(key);
      }),
    );
    if (this.#stopped) return;
    this.#bound();
    const fingerprint = fingerprintOf(this.#sorted());
    if (fingerprint !== this.#fingerprint || this.#firstRead) {
      this.#fingerprint = fingerprint;
      this.#firstRead = false;
      this.#options.onChange();
    }
  }

  async #read(key: string): Promise<void> {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    if (!entry.read) this.#firstRead = true;
    const { reference } = entry;
    const { api, logger } = this.#options;
    const deadline = api.deadline(this.#options.timeoutMs ?? 5000);
    const what = `${reference.kind} ${reference.namespace}/${reference.name}`;
    try {
      const call =
        reference.kind === 'Secret'
          ? api.core.readNamespacedSecret({ name: reference.name, namespace: reference.namespace }, deadline)
          : api.core.readNamespacedConfigMap(
              { name: reference.name, namespace: reference.namespace },
              deadline,
            );
      const object = usedPart(reference, apiJson<Record<string, unknown>>(await call));
      const bytes = sizeOf(object);
      const max = this.#options.maxObjectBytes ?? 256 * 1024;
      if (bytes > max) {
        Object.assign(entry, {
          read: true,
          object: undefined,
          bytes: 0,
          problem: `${what} holds ${bytes} bytes of data; Signet reads at most ${max} for an ImagePolicy`,
        });
        return;
      }
      Object.assign(entry, { read: true, object, bytes, problem: undefined });
    } catch (error) {
      const status = statusOf(error);
      if (status === 404) {
        Object.assign(entry, { read: true, object: undefined, bytes: 0, problem: undefined });
        return;
      }
      if (status === 401 || status === 403) {
        Object.assign(entry, {
          read: true,
          object: undefined,
          bytes: 0,
          problem: `Signet may not read ${what}: ${(error as Error).message}`,
        });
        return;
      }
      // The API server did not answer: what was read before still holds; tried again next time.
      entry.read = true;
      logger.warn({ err: error, object: what }, 'could not read an object an ImagePolicy references');
    }
  }

  /** Drops objects beyond the total bound, the last references (in their order) first. */
  #bound(): void {
    const max = this.#options.maxTotalBytes ?? 16 * 1024 * 1024;
    let total = 0;
    for (const entry of this.#sorted()) {
      if (entry.object === undefined) continue;
      total += entry.bytes;
      if (total <= max) continue;
      entry.object = undefined;
      entry.problem = `not read: the Secrets and ConfigMaps ImagePolicies reference hold more than ${max} bytes together`;
    }
  }
}

function compareKeys(a: Entry, b: Entry): number {
  const [x, y] = [referenceKey(a.reference), referenceKey(b.reference)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Why a reference is not read at all, or `undefined`. */
function refusal(reference: InputReference, index: number, max: number): string | undefined {
  if (reference.kind === 'ConfigMap' && reference.name === CONFIG_NAME)
    return `ConfigMap ${reference.namespace}/${CONFIG_NAME}: that name is Signet's configuration's, never read from a team's namespace`;
  if (index > max)
    return `${reference.kind} ${reference.namespace}/${reference.name}: not read, beyond the ${max} Secrets and ConfigMaps Signet reads for ImagePolicies`;
  return undefined;
}

/** What the compiler reads of a Secret or ConfigMap: its kind, name, namespace and data. */
function usedPart(reference: InputReference, object: Record<string, unknown>): Record<string, unknown> {
  const metadata = { name: reference.name, namespace: reference.namespace };
  if (reference.kind === 'Secret') {
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata,
      ...(typeof object.type === 'string' ? { type: object.type } : {}),
      data: object.data ?? {},
    };
  }
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: object.data ?? {} };
}

function sizeOf(object: Record<string, unknown>): number {
  const data = (object.data ?? {}) as Record<string, unknown>;
  return Object.entries(data).reduce(
    (sum, [key, value]) => sum + key.length + (typeof value === 'string' ? value.length : 0),
    0,
  );
}

function fingerprintOf(entries: readonly Entry[]): string {
  const hash = createHash('sha256');
  for (const entry of entries) {
    hash.update(referenceKey(entry.reference));
    hash.update(JSON.stringify([entry.object?.data ?? null, entry.problem ?? null]));
  }
  return hash.digest('hex');
}
