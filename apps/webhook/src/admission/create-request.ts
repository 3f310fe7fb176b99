// An AdmissionRequest for creating an object, as the API server would send it: how `signet
// verify` (and audits) judge manifests and images by exactly the path the webhook takes.
import { randomUUID } from 'node:crypto';
import { type AdmissionRequest, type KubeObject, workloadForKind } from '@signet/k8s-types';

export interface CreateRequestOptions {
  /** The namespace when the object names none. */
  readonly namespace: string;
  readonly username?: string;
}

/**
 * The CREATE request for `object`, or `undefined` when its kind carries no pod spec (Signet has
 * nothing to say about it). The object's own namespace wins over `options.namespace`.
 */
export function createRequestFor(
  object: KubeObject,
  options: CreateRequestOptions,
): AdmissionRequest | undefined {
  const [group, version] = groupVersionOf(object.apiVersion);
  const info = workloadForKind(group, object.kind ?? '');
  if (info === undefined || version === undefined) return undefined;
  const namespace = object.metadata?.namespace ?? options.namespace;
  const metadata = { ...object.metadata, namespace };
  return {
    uid: randomUUID(),
    kind: { group, version, kind: info.kind },
    resource: { group, version, resource: info.resource },
    namespace,
    ...(typeof metadata.name === 'string' ? { name: metadata.name } : {}),
    operation: 'CREATE',
    userInfo: { username: options.username ?? 'signet-verify' },
    object: { ...object, metadata },
    oldObject: null,
    dryRun: true,
  };
}

/** A Pod with one container running `image`: what `signet verify IMAGE` judges. */
export function podRunning(image: string, namespace: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'signet-verify', namespace },
    spec: { containers: [{ name: 'image', image }] },
  };
}

function groupVersionOf(apiVersion: string | undefined): [string, string | undefined] {
  if (apiVersion === undefined || apiVersion === '') return ['', undefined];
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}
