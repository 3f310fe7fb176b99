// Minimal manifests of every kind Signet covers, each running one container `app` with an image.

import type { WorkloadKind } from '@signet/k8s-types';

export type { WorkloadKind };

export interface WorkloadOptions {
  readonly replicas?: number;
  readonly labels?: Readonly<Record<string, string>>;
  readonly finalizers?: readonly string[];
}

const podSpec = (image: string, restartPolicy?: string) => ({
  ...(restartPolicy ? { restartPolicy } : {}),
  containers: [{ name: 'app', image }],
  // kwok plays the kubelet: nothing waits 30 s for a process to stop.
  terminationGracePeriodSeconds: 0,
});

/** Where a container image of `kind` lives, as Signet's deny messages name it. */
export function imageFieldPath(kind: WorkloadKind): string {
  switch (kind) {
    case 'Pod':
      return 'spec.containers[0].image';
    case 'CronJob':
      return 'spec.jobTemplate.spec.template.spec.containers[0].image';
    default:
      return 'spec.template.spec.containers[0].image';
  }
}

export function workloadManifest(
  kind: WorkloadKind,
  namespace: string,
  name: string,
  image: string,
  options: WorkloadOptions = {},
): object {
  const labels = { app: name, ...options.labels };
  const metadata = {
    name,
    namespace,
    labels,
    ...(options.finalizers ? { finalizers: [...options.finalizers] } : {}),
  };
  const template = { metadata: { labels }, spec: podSpec(image) };
  const replicas = options.replicas ?? 1;
  switch (kind) {
    case 'Pod':
      return { apiVersion: 'v1', kind, metadata, spec: podSpec(image) };
    case 'ReplicationController':
      return { apiVersion: 'v1', kind, metadata, spec: { replicas, selector: labels, template } };
    case 'Deployment':
    case 'ReplicaSet':
      return {
        apiVersion: 'apps/v1',
        kind,
        metadata,
        spec: { replicas, selector: { matchLabels: labels }, template },
      };
    case 'StatefulSet':
      return {
        apiVersion: 'apps/v1',
        kind,
        metadata,
        spec: { replicas, serviceName: name, selector: { matchLabels: labels }, template },
      };
    case 'DaemonSet':
      return { apiVersion: 'apps/v1', kind, metadata, spec: { selector: { matchLabels: labels }, template } };
    case 'Job':
      return {
        apiVersion: 'batch/v1',
        kind,
        metadata,
        spec: { backoffLimit: 0, template: { metadata: { labels }, spec: podSpec(image, 'Never') } },
      };
    case 'CronJob':
      return {
        apiVersion: 'batch/v1',
        kind,
        metadata,
        spec: {
          schedule: '*/5 * * * *',
          jobTemplate: { spec: { template: { metadata: { labels }, spec: podSpec(image, 'Never') } } },
        },
      };
  }
}
