// What an audit judges: every top-level workload (by its template: what a new Pod would run) and
// every Pod that is not finished (by what it runs: its pulled digests), each filed under the
// workload that owns it. Intermediate controllers (a Deployment's ReplicaSets, a CronJob's Jobs)
// are covered by their owner and their Pods, so they are not judged on their own.
import { controllerOf, type KubeObject, workloadForKind } from '@signet/k8s-types';
import { pinToPulledDigests } from './pulled-images.js';

export interface WorkloadRef {
  readonly kind: string;
  readonly name: string;
  /** From the owner reference or the object (absent in manifests that have none). */
  readonly uid?: string;
}

export interface AuditSubject {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string | undefined;
  /** The topmost known controller (`Deployment/web` for its Pods); the object itself when none. */
  readonly owner: WorkloadRef;
  /** What is judged: for a Pod, a copy pinned to its pulled digests. */
  readonly object: KubeObject;
  /** Field path -> the spec's image, where the pulled digest replaced it. */
  readonly specImages: Readonly<Record<string, string>>;
}

export interface SubjectOptions {
  /** The namespace of objects that name none (manifests). */
  readonly namespace: string;
  /** More objects to follow owner chains through (ReplicaSets, Jobs), not judged themselves. */
  readonly owners?: readonly KubeObject[];
}

const FINISHED = new Set(['Succeeded', 'Failed']);

function keyOf(namespace: string, kind: string, name: string): string {
  return `${namespace}/${kind}/${name}`;
}

/** Objects by namespace, kind and name, to follow owner references through. */
class OwnerIndex {
  readonly #known = new Map<string, KubeObject>();

  constructor(
    objects: Iterable<KubeObject>,
    readonly namespaceOf: (object: KubeObject) => string,
  ) {
    for (const object of objects) this.#known.set(this.#keyOf(object), object);
  }

  #keyOf(object: KubeObject): string {
    return keyOf(this.namespaceOf(object), object.kind ?? '', object.metadata?.name ?? '');
  }

  /** The controller of `object`, when it is among the indexed objects. */
  controllerObject(object: KubeObject): KubeObject | undefined {
    const owner = controllerOf(object);
    return owner && this.#known.get(keyOf(this.namespaceOf(object), owner.kind, owner.name));
  }

  /** The topmost controller of `object` (its own reference when it has none). */
  topOf(object: KubeObject): WorkloadRef {
    const uid = object.metadata?.uid;
    let current: WorkloadRef = {
      kind: object.kind ?? '',
      name: object.metadata?.name ?? '',
      ...(typeof uid === 'string' ? { uid } : {}),
    };
    let at: KubeObject | undefined = object;
    // Owner chains are short (Pod -> ReplicaSet -> Deployment); the bound guards against loops.
    for (let depth = 0; at !== undefined && depth < 8; depth++) {
      const owner = controllerOf(at);
      if (owner === undefined) break;
      current = { kind: owner.kind, name: owner.name, uid: owner.uid };
      at = this.controllerObject(at);
    }
    return current;
  }
}

function groupOf(apiVersion: string | undefined): string {
  const slash = (apiVersion ?? '').indexOf('/');
  return slash < 0 ? '' : (apiVersion ?? '').slice(0, slash);
}

function isFinishedPod(object: KubeObject): boolean {
  const phase = (object as { status?: { phase?: unknown } }).status?.phase;
  return typeof phase === 'string' && FINISHED.has(phase);
}

/** The subjects of `objects`, in their order; kinds without a pod spec are ignored. */
export function auditSubjects(objects: readonly KubeObject[], options: SubjectOptions): AuditSubject[] {
  const namespaceOf = (o: KubeObject) => o.metadata?.namespace ?? options.namespace;
  const index = new OwnerIndex([...(options.owners ?? []), ...objects], namespaceOf);
  const subjects: AuditSubject[] = [];
  for (const object of objects) {
    const info = workloadForKind(groupOf(object.apiVersion), object.kind ?? '');
    if (info === undefined) continue;
    const isPod = info.kind === 'Pod';
    if (isPod ? isFinishedPod(object) : index.controllerObject(object) !== undefined) continue;
    const pulled = isPod ? pinToPulledDigests(object) : { object, specImages: {} };
    subjects.push({
      kind: info.kind,
      namespace: namespaceOf(object),
      name: object.metadata?.name ?? '',
      uid: typeof object.metadata?.uid === 'string' ? object.metadata.uid : undefined,
      owner: index.topOf(object),
      object: pulled.object,
      specImages: pulled.specImages,
    });
  }
  return subjects;
}
