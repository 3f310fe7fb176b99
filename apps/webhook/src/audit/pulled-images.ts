// What a running Pod actually runs: the digest the container runtime pulled
// (`status.containerStatuses[].imageID`), which may differ from what the spec's tag names today.
// An audit judges a copy of the Pod whose image fields are pinned to those digests.
import { isObject, type KubeObject } from '@signet/k8s-types';

const STATUS_LISTS = {
  containers: 'containerStatuses',
  initContainers: 'initContainerStatuses',
  ephemeralContainers: 'ephemeralContainerStatuses',
} as const;

const DIGEST = /@(sha256:[0-9a-f]{64})$/;

/**
 * The manifest digest in an `imageID`: `docker-pullable://host/repo@sha256:...` (dockershim),
 * `host/repo@sha256:...` (containerd, CRI-O). A bare `sha256:...` is an image (config) id, not a
 * manifest digest, and says nothing verifiable: `undefined`.
 */
export function pulledDigestOf(imageID: unknown): string | undefined {
  if (typeof imageID !== 'string') return undefined;
  return DIGEST.exec(imageID)?.[1];
}

/** `host/repo:tag@sha256:...` -> `host/repo`, keeping a registry port (`host:5000/repo`). */
export function repositoryOf(image: string): string {
  const at = image.indexOf('@');
  const name = at < 0 ? image : image.slice(0, at);
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  return colon > slash ? name.slice(0, colon) : name;
}

export interface PulledPod {
  /** The Pod with each image whose pulled digest is known pinned to it (`repo@digest`). */
  readonly object: KubeObject;
  /** Field path (`spec.containers[0].image`) -> the image as the spec wrote it, for pinned fields. */
  readonly specImages: Readonly<Record<string, string>>;
}

/**
 * A copy of `pod` judged by what runs: every container whose status names the digest it pulled
 * gets `repository@digest` (the spec's repository: policies match what the spec names). Containers
 * without a status, or whose runtime reports no manifest digest, keep the spec's image.
 */
export function pinToPulledDigests(pod: KubeObject): PulledPod {
  const spec = pod.spec;
  const status = (pod as { status?: unknown }).status;
  if (!isObject(spec) || !isObject(status)) return { object: pod, specImages: {} };
  const specImages: Record<string, string> = {};
  const pinnedSpec: Record<string, unknown> = { ...spec };
  for (const [field, statusField] of Object.entries(STATUS_LISTS)) {
    const containers = spec[field];
    const statuses = status[statusField];
    if (!Array.isArray(containers) || !Array.isArray(statuses)) continue;
    const pulled = new Map<string, string>();
    for (const s of statuses) {
      if (!isObject(s) || typeof s.name !== 'string') continue;
      const digest = pulledDigestOf(s.imageID);
      if (digest !== undefined) pulled.set(s.name, digest);
    }
    pinnedSpec[field] = containers.map((container: unknown, index) => {
      if (!isObject(container) || typeof container.image !== 'string') return container;
      const digest = typeof container.name === 'string' ? pulled.get(container.name) : undefined;
      if (digest === undefined) return container;
      const image = `${repositoryOf(container.image)}@${digest}`;
      if (image === container.image) return container;
      specImages[`spec.${field}[${index}].image`] = container.image;
      return { ...container, image };
    });
  }
  return { object: { ...pod, spec: pinnedSpec }, specImages };
}
