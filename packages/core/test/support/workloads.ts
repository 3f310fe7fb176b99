// Builders for admission requests of every covered kind, shared by the table and property tests.
import { readFileSync } from 'node:fs';
import {
  type AdmissionRequest,
  type KubeObject,
  type Operation,
  parseAdmissionReview,
  WORKLOAD_LIST,
  WORKLOADS,
  type WorkloadInfo,
  type WorkloadKind,
} from '@signet/k8s-types';

export type Json = Record<string, unknown>;

export const ALL_KINDS: readonly WorkloadKind[] = WORKLOAD_LIST.map((info) => info.kind);
export const TEMPLATE_KINDS: readonly WorkloadKind[] = ALL_KINDS.filter(
  (k) => WORKLOADS[k].templatePath !== null,
);
export const SCALE_KINDS: readonly WorkloadKind[] = ALL_KINDS.filter((k) => WORKLOADS[k].scalePath !== null);
export const NO_SCALE_KINDS: readonly WorkloadKind[] = TEMPLATE_KINDS.filter(
  (k) => WORKLOADS[k].scalePath === null,
);

/** A parsed request from `test/fixtures/<name>`. */
export function loadRequest(name: string): AdmissionRequest {
  const text = readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
  return parseAdmissionReview(JSON.parse(text)).request;
}

export function container(name: string, image: string, extra: Json = {}): Json {
  return { name, image, imagePullPolicy: 'IfNotPresent', resources: {}, ...extra };
}

/** A pod spec with one container per image, plus an init container and an image volume. */
export function podSpec(images: readonly string[], extra: Json = {}): Json {
  return {
    containers: images.map((image, index) => container(`c${index}`, image)),
    initContainers: [container('init', 'registry.example/init:1')],
    volumes: [{ name: 'data', image: { reference: 'registry.example/data:1', pullPolicy: 'IfNotPresent' } }],
    restartPolicy: 'Always',
    ...extra,
  };
}

export interface ObjectOptions {
  readonly spec?: Json;
  readonly scale?: number;
  readonly controller?: boolean;
  readonly deleting?: boolean;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly templateLabels?: Readonly<Record<string, string>>;
}

/** An object of `kind` whose pod spec is `options.spec` (default: two containers). */
export function objectOf(kind: WorkloadKind, options: ObjectOptions = {}): KubeObject {
  const info = WORKLOADS[kind];
  const spec = options.spec ?? podSpec(['registry.example/app:1', 'registry.example/sidecar:1']);
  const metadata: Json = {
    name: `${kind.toLowerCase()}-a`,
    namespace: 'shop',
    labels: options.labels ?? { app: 'a' },
  };
  if (options.annotations) metadata.annotations = options.annotations;
  if (options.controller) {
    metadata.ownerReferences = [
      {
        apiVersion: 'apps/v1',
        kind: 'Owner',
        name: 'owner-a',
        uid: 'u-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ];
  }
  if (options.deleting) metadata.deletionTimestamp = '2026-11-30T10:00:00Z';
  const object: Json = { apiVersion: apiVersionOf(info), kind, metadata };
  if (info.templatePath === null) {
    object.spec = spec;
  } else {
    setAt(object, info.templatePath, { metadata: { labels: options.templateLabels ?? { app: 'a' } }, spec });
  }
  if (info.scalePath !== null) setAt(object, info.scalePath, options.scale ?? 3);
  return object as KubeObject;
}

export function requestFor(
  kind: WorkloadKind,
  operation: Operation,
  object: KubeObject | null,
  oldObject: KubeObject | null = null,
  subResource?: string,
): AdmissionRequest {
  const info = WORKLOADS[kind];
  const base = {
    uid: 'uid-1',
    kind: { group: info.group, version: 'v1', kind },
    resource: { group: info.group, version: 'v1', resource: info.resource },
    name: 'a',
    namespace: 'shop',
    operation,
    userInfo: { username: 'alice' },
    object,
    oldObject,
  };
  return subResource === undefined ? base : { ...base, subResource };
}

export function update(kind: WorkloadKind, old: KubeObject, object: KubeObject, subResource?: string) {
  return requestFor(kind, 'UPDATE', object, old, subResource);
}

/** Deep copy with `edit` applied to the copy. */
export function edited(object: KubeObject, edit: (copy: Json) => void): KubeObject {
  const copy = structuredClone(object) as Json;
  edit(copy);
  return copy as KubeObject;
}

export function setAt(object: Json, path: readonly string[], value: unknown): void {
  let current = object;
  path.slice(0, -1).forEach((key) => {
    current[key] ??= {};
    current = current[key] as Json;
  });
  current[path[path.length - 1] as string] = value;
}

export function getAt(object: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((current, key) => (current as Json | undefined)?.[key], object);
}

export function podSpecPathOf(kind: WorkloadKind): readonly string[] {
  return WORKLOADS[kind].podSpecPath;
}

function apiVersionOf(info: WorkloadInfo): string {
  return info.group === '' ? 'v1' : `${info.group}/v1`;
}
