// Real-shaped AdmissionReviews for the webhook tests, built from one pod spec so each test changes
// only what its rule is about.

type Json = Record<string, unknown>;

export const CONTROLLER = 'system:serviceaccount:kube-system:deployment-controller';

export function podSpec(image: string, extra: Json = {}): Json {
  return {
    containers: [
      {
        name: 'app',
        image,
        imagePullPolicy: 'IfNotPresent',
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        resources: {},
      },
    ],
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
    schedulerName: 'default-scheduler',
    securityContext: {},
    terminationGracePeriodSeconds: 30,
    ...extra,
  };
}

const GROUPS: Record<string, string> = {
  Pod: '',
  Deployment: 'apps',
  ReplicaSet: 'apps',
  StatefulSet: 'apps',
  DaemonSet: 'apps',
  Job: 'batch',
  CronJob: 'batch',
  ReplicationController: '',
};

export function workload(
  kind: string,
  image: string,
  options: { replicas?: number; owner?: string; labels?: Json; annotations?: Json; deleting?: boolean } = {},
): Json {
  const metadata: Json = {
    name: 'foo-bar',
    namespace: 'test',
    uid: 'u-foo-bar',
    labels: options.labels ?? { app: 'foo-bar' },
    ...(options.annotations ? { annotations: options.annotations } : {}),
    ...(options.owner
      ? {
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: options.owner, name: 'foo-bar', uid: 'u-owner', controller: true },
          ],
        }
      : {}),
    ...(options.deleting ? { deletionTimestamp: '2026-11-30T12:00:00Z' } : {}),
  };
  const group = GROUPS[kind] ?? '';
  const apiVersion = group === '' ? 'v1' : `${group}/v1`;
  if (kind === 'Pod') return { apiVersion, kind, metadata, spec: podSpec(image) };
  const template = { metadata: { labels: { app: 'foo-bar' } }, spec: podSpec(image) };
  if (kind === 'CronJob') {
    return {
      apiVersion,
      kind,
      metadata,
      spec: { schedule: '* * * * *', jobTemplate: { spec: { template } } },
    };
  }
  const scale =
    kind === 'Job'
      ? { parallelism: options.replicas ?? 1 }
      : kind === 'DaemonSet'
        ? {}
        : { replicas: options.replicas ?? 2 };
  return {
    apiVersion,
    kind,
    metadata,
    spec: { ...scale, selector: { matchLabels: { app: 'foo-bar' } }, template },
  };
}

let counter = 0;

export function review(
  kind: string,
  operation: 'CREATE' | 'UPDATE',
  object: Json,
  oldObject: Json | null = null,
  options: { user?: string; subResource?: string } = {},
): string {
  const group = GROUPS[kind] ?? '';
  const resource = `${kind.toLowerCase()}s`;
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `review-${++counter}`,
      kind: { group, version: 'v1', kind },
      resource: { group, version: 'v1', resource },
      ...(options.subResource ? { subResource: options.subResource } : {}),
      name: 'foo-bar',
      namespace: 'test',
      operation,
      userInfo: { username: options.user ?? 'alice', groups: ['system:authenticated'] },
      object,
      oldObject,
      dryRun: false,
    },
  });
}
