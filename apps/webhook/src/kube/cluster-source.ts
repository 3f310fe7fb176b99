import type { Part } from '../lifecycle/part.js';
import type { Logger } from '../logger.js';
import { referencedInputsOf } from '../policy/namespaced-references.js';
import { collectPolicyObjects, type PolicyObjects, type PolicyProblem } from '../policy/policy-objects.js';
import type { KubeApi } from './kube-api.js';
import { statusOf } from './kube-errors.js';
import { apiJson, type ListPage } from './lists.js';
import { type InputProblem, ReferencedInputs, type ReferencedInputsOptions } from './referenced-inputs.js';
import type { WatchedPolicyObject } from './status-writer.js';
import { WatchedCollection, type WatchedObject } from './watched-collection.js';

interface Collection {
  readonly kind: string;
  readonly apiVersion: string;
  readonly watched: WatchedCollection;
  /** Set for the custom resources (their status is written there). */
  readonly resource?: WatchedPolicyObject['resource'];
}

export interface ClusterPolicySourceOptions {
  readonly api: KubeApi;
  /** The webhook's namespace: its config ConfigMap and the Secrets policies reference live here. */
  readonly namespace: string;
  readonly logger: Logger;
  /**
   * Called with every new consistent view, debounced; compile and swap it in there. Changes that
   * do not touch what policies are compiled from (status, finalizers, resourceVersion) are not
   * delivered: writing a policy's status must not recompile every policy.
   */
  readonly onChange: (objects: PolicyObjects) => void;
  /** Called after every burst of changes, status-only ones included (status reconciliation). */
  readonly onObjects?: () => void;
  /** Called, besides the log line, when a list or watch fails (it is retried in 5 s). */
  readonly onError?: (error: unknown) => void;
  readonly debounceMs?: number;
  /** Bounds and schedule of the Secrets and ConfigMaps ImagePolicies reference (tests shorten it). */
  readonly referencedInputs?: Omit<ReferencedInputsOptions, 'api' | 'logger' | 'onChange'>;
}

/** A namespace's ImagePolicy or ImagePolicyException as watched, and where its status is written. */
export interface WatchedNamespacedObject {
  readonly kind: 'ImagePolicy' | 'ImagePolicyException';
  readonly resource: WatchedPolicyObject['resource'];
  readonly object: WatchedPolicyObject['object'] & {
    metadata?: WatchedPolicyObject['object']['metadata'] & { namespace?: string };
  };
}

/** What a policy compile reads of an object: everything but status and bookkeeping metadata. */
function compiledPart(object: Record<string, unknown>): unknown {
  const {
    status: _status,
    metadata,
    ...rest
  } = object as { status?: unknown; metadata?: Record<string, unknown> };
  if (metadata === undefined) return rest;
  const { resourceVersion: _v, managedFields: _m, finalizers: _f, ...kept } = metadata;
  return { ...rest, metadata: kept };
}

const GROUP = 'policy.sigstore.dev';
/** Signet's own namespaced kinds (ADR 0024). */
const SIGNET_GROUP = 'policy.signet.dev';
const SIGNET_KINDS = [
  ['ImagePolicy', 'imagepolicies'],
  ['ImagePolicyException', 'imagepolicyexceptions'],
] as const;
/** Without Signet's CRDs (`installCRDs=false`, or `signet audit` before Signet), looked for again this often. */
const ABSENT_RETRY_MS = 60_000;

/** A list page may take this long (the informer lists again after a failure). */
const LIST_TIMEOUT_MS = 30_000;

/** The paging parameters of a list call. */
function pageRequest(token: string | undefined, limit: number): { limit: number; _continue?: string } {
  return { limit, ...(token ? { _continue: token } : {}) };
}

/** A typed list page with its items as the API's JSON: the watch delivers JSON, so both agree. */
function asApiJson(page: ListPage<unknown>): ListPage<WatchedObject> {
  return { ...page, items: page.items.map((item) => apiJson<WatchedObject>(item)) };
}

/**
 * Watches ClusterImagePolicies (v1beta1, or v1alpha1 where only that is served), TrustRoots,
 * the `config-policy-controller` ConfigMap and the Secrets of the webhook's namespace, and every
 * namespace's ImagePolicies and ImagePolicyExceptions (list, then watch); reads the Secrets and
 * ConfigMaps the ImagePolicies reference by name (see ReferencedInputs); and hands a complete
 * snapshot to `onChange` after each burst of changes. `synced` resolves after the first complete
 * list of everything (readiness waits for it).
 */
export class ClusterPolicySource implements Part {
  readonly name = 'policy watches';
  readonly #options: ClusterPolicySourceOptions;
  readonly #collections: Collection[] = [];
  readonly #inputs: ReferencedInputs;
  #resolveSynced: (() => void) | undefined;
  /** Resolves after the first complete snapshot was delivered (every collection listed once). */
  readonly synced: Promise<void> = new Promise((resolve) => {
    this.#resolveSynced = resolve;
  });
  #timer: NodeJS.Timeout | undefined;
  /** What the last delivered view was compiled from. */
  #delivered: string | undefined;
  #started = false;
  #stopped = false;

  constructor(options: ClusterPolicySourceOptions) {
    this.#options = options;
    this.#inputs = new ReferencedInputs({
      ...options.referencedInputs,
      api: options.api,
      logger: options.logger,
      onChange: () => this.#schedule(),
    });
  }

  /**
   * Starts the watches. Snapshots are delivered only once every collection was listed: a failed
   * list (no RBAC, API server starting) leaves Signet not ready, never ready with no policies.
   * Failed lists and watches restart after 5 s. Await `synced` for the first delivery.
   */
  async start(): Promise<void> {
    if (this.#started) throw new Error('ClusterPolicySource already started');
    this.#started = true;
    const { api, namespace } = this.#options;
    const policyVersion = await this.#servedPolicyVersion();
    const timeout = api.deadline(LIST_TIMEOUT_MS);
    this.#watchPolicies('ClusterImagePolicy', policyVersion, 'clusterimagepolicies');
    this.#watchPolicies('TrustRoot', 'v1alpha1', 'trustroots');
    this.#watch('ConfigMap', 'v1', `/api/v1/namespaces/${namespace}/configmaps`, (token, limit) =>
      api.core.listNamespacedConfigMap({ namespace, ...pageRequest(token, limit) }, timeout).then(asApiJson),
    );
    this.#watch('Secret', 'v1', `/api/v1/namespaces/${namespace}/secrets`, (token, limit) =>
      api.core.listNamespacedSecret({ namespace, ...pageRequest(token, limit) }, timeout).then(asApiJson),
    );
    for (const [kind, plural] of SIGNET_KINDS) this.#watchSignetKind(kind, plural);
    for (const { watched } of this.#collections) watched.start();
    this.#inputs.start();
  }

  /** Every namespace's objects of a policy.signet.dev kind; none while its CRD is not installed. */
  #watchSignetKind(kind: string, plural: string): void {
    const resource = { group: SIGNET_GROUP, version: 'v1alpha1', plural };
    const timeout = this.#options.api.deadline(LIST_TIMEOUT_MS);
    const absent = {
      retryMs: ABSENT_RETRY_MS,
      onAbsent: () =>
        this.#options.logger.warn(
          { resource: `${plural}.${SIGNET_GROUP}` },
          `the ${kind} CRD is not installed: no ${kind} applies (installCRDs=false?); looking again every minute`,
        ),
    };
    this.#watch(
      kind,
      `${SIGNET_GROUP}/v1alpha1`,
      `/apis/${SIGNET_GROUP}/v1alpha1/${plural}`,
      (token, limit) =>
        this.#options.api.customObjects.listClusterCustomObject(
          { ...resource, ...pageRequest(token, limit) },
          timeout,
        ) as Promise<ListPage<WatchedObject>>,
      resource,
      absent,
    );
  }

  /** A policy.sigstore.dev collection: listed as the API's JSON, its status written where it is read. */
  #watchPolicies(kind: string, version: string, plural: string): void {
    const resource = { group: GROUP, version, plural };
    const timeout = this.#options.api.deadline(LIST_TIMEOUT_MS);
    this.#watch(
      kind,
      `${GROUP}/${version}`,
      `/apis/${GROUP}/${version}/${plural}`,
      (token, limit) =>
        this.#options.api.customObjects.listClusterCustomObject(
          { ...resource, ...pageRequest(token, limit) },
          timeout,
        ) as Promise<ListPage<WatchedObject>>,
      resource,
    );
  }

  #watch(
    kind: string,
    apiVersion: string,
    path: string,
    listPage: (token: string | undefined, limit: number) => Promise<ListPage<WatchedObject>>,
    resource?: WatchedPolicyObject['resource'],
    absent?: { readonly retryMs: number; readonly onAbsent: () => void },
  ): void {
    const watched = new WatchedCollection({
      config: this.#options.api.config,
      path,
      listPage,
      ...(absent ? { absent } : {}),
      onChange: () => this.#schedule(),
      onError: (error) => {
        this.#options.logger.error(
          { err: error, collection: path },
          'policy watch failed; restarting it in 5s',
        );
        this.#options.onError?.(error);
      },
    });
    this.#collections.push({ kind, apiVersion, watched, ...(resource ? { resource } : {}) });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#inputs.stop();
    await Promise.all(this.#collections.map(({ watched }) => watched.stop()));
  }

  /** The current view of everything watched. */
  snapshot(): PolicyObjects {
    return this.#view(this.#objects());
  }

  /** The namespaces' ImagePolicies and ImagePolicyExceptions as watched (their status is written there). */
  namespacedObjects(): WatchedNamespacedObject[] {
    return this.#collections.flatMap(({ kind, apiVersion, watched, resource }) =>
      resource !== undefined && (kind === 'ImagePolicy' || kind === 'ImagePolicyException')
        ? watched.objects().map((object) => ({ kind, resource, object: { ...object, kind, apiVersion } }))
        : [],
    );
  }

  /** The objects sorted into what Signet uses, with what could not be read of the referenced inputs. */
  #view(objects: readonly Record<string, unknown>[]): PolicyObjects {
    const collected = collectPolicyObjects(objects, this.#options.namespace);
    const unread = this.#inputs.problems();
    return unread.length === 0
      ? collected
      : { ...collected, problems: [...collected.problems, ...unread.map(inputProblem)] };
  }

  /** The ClusterImagePolicies and TrustRoots as watched, with the collection each is served from. */
  policyObjects(): WatchedPolicyObject[] {
    return this.#collections.flatMap(({ kind, apiVersion, watched, resource }) =>
      resource !== undefined && (kind === 'ClusterImagePolicy' || kind === 'TrustRoot')
        ? watched.objects().map((object) => ({
            kind,
            resource,
            object: { ...object, kind, apiVersion: (object.apiVersion as string | undefined) ?? apiVersion },
          }))
        : [],
    );
  }

  #objects(): Record<string, unknown>[] {
    // Items of typed lists carry no kind or apiVersion; the parsers dispatch on them.
    const watched = this.#collections.flatMap(({ kind, apiVersion, watched }) =>
      watched.objects().map((object) => ({ ...object, kind, apiVersion: object.apiVersion ?? apiVersion })),
    );
    return [...watched, ...this.#inputs.objects()];
  }

  /**
   * True when every Secret and ConfigMap the ImagePolicies reference has been read (those of the
   * webhook's own namespace are watched already).
   */
  #inputsRead(): boolean {
    const imagePolicies = this.#collections
      .filter(({ kind }) => kind === 'ImagePolicy')
      .flatMap(({ watched }) => watched.objects());
    const { namespace } = this.#options;
    return this.#inputs.want(referencedInputsOf(imagePolicies).filter((r) => r.namespace !== namespace));
  }

  async #servedPolicyVersion(): Promise<'v1beta1' | 'v1alpha1'> {
    try {
      await this.#options.api.customObjects.listClusterCustomObject(
        { group: GROUP, version: 'v1beta1', plural: 'clusterimagepolicies', limit: 1 },
        this.#options.api.deadline(10_000),
      );
      return 'v1beta1';
    } catch (error) {
      // Only a 404 means "not served"; anything else (no RBAC yet, API server starting) is retried
      // by the v1beta1 watch itself.
      if (statusOf(error) !== 404) return 'v1beta1';
      this.#options.logger.warn(
        { err: error },
        'ClusterImagePolicy v1beta1 is not served; watching v1alpha1',
      );
      return 'v1alpha1';
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#deliver(), this.#options.debounceMs ?? 100);
    this.#timer.unref();
  }

  #deliver(): void {
    const pending = this.#collections.filter((entry) => !entry.watched.listed).map((entry) => entry.kind);
    if (pending.length > 0) {
      this.#options.logger.warn(
        { pending },
        'not all policy collections are listed yet; not delivering a partial view',
      );
      return;
    }
    // A new ImagePolicy's keys are read before it is compiled, rather than compiled without them
    // (denying what it matches meanwhile); the read calls back here.
    if (!this.#inputsRead()) return;
    this.#resolveSynced?.();
    try {
      const objects = this.#objects();
      const unread = this.#inputs.problems();
      const compiled = JSON.stringify([objects.map(compiledPart), unread]);
      if (compiled !== this.#delivered) {
        this.#delivered = compiled;
        this.#options.onChange(this.#view(objects));
      }
      this.#options.onObjects?.();
    } catch (error) {
      this.#options.logger.error(
        { err: error },
        'applying the new policy snapshot failed; keeping the previous one',
      );
    }
  }
}

/** A referenced Secret or ConfigMap Signet does not use, as a policy problem (logged). */
function inputProblem({ reference, message }: InputProblem): PolicyProblem {
  return {
    object: `${reference.kind}/${reference.namespace}/${reference.name}`,
    ref: { apiVersion: 'v1', kind: reference.kind, name: reference.name, namespace: reference.namespace },
    message,
  };
}
