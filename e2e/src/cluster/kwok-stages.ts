import { stringify } from 'yaml';

// kwok's own binary ships no stages (only kwokctl adds defaults), so the harness declares the
// lifecycle it needs. Templates are Go text/template rendered by kwok with its helpers (`Now`,
// `Quote`, `NodeConditions`, `PodIPWith`, ...); the result is patched into the object's status.

interface Expression {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values?: readonly string[];
}

interface StageSpec {
  readonly kind: 'Node' | 'Pod';
  readonly match: readonly Expression[];
  readonly delayMs?: number;
  readonly next: { readonly statusTemplate: string } | { readonly delete: true };
}

function stage(name: string, spec: StageSpec): object {
  return {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name },
    spec: {
      resourceRef: { apiGroup: 'v1', kind: spec.kind },
      selector: { matchExpressions: spec.match },
      ...(spec.delayMs === undefined
        ? {}
        : {
            delay: { durationMilliseconds: spec.delayMs, jitterDurationMilliseconds: spec.delayMs + 5_000 },
          }),
      next: spec.next,
    },
  };
}

const READY_STATUS = '.status.conditions.[] | select( .type == "Ready" ) | .status';
const NOT_DELETED: Expression = { key: '.metadata.deletionTimestamp', operator: 'DoesNotExist' };

/** Kubelet-like node conditions, all healthy, stamped now. */
const NODE_CONDITIONS = `conditions:
{{ range NodeConditions }}
- type: {{ .type | Quote }}
  status: {{ .status | Quote }}
  reason: {{ .reason | Quote }}
  message: {{ .message | Quote }}
  lastHeartbeatTime: {{ Now | Quote }}
  lastTransitionTime: {{ Now | Quote }}
{{ end }}`;

/** A new node becomes Ready at once, with node info that says it is simulated. */
const nodeReady = stage('signet-node-ready', {
  kind: 'Node',
  match: [{ key: READY_STATUS, operator: 'NotIn', values: ['True'] }],
  next: {
    statusTemplate: `${NODE_CONDITIONS}
nodeInfo:
  architecture: amd64
  operatingSystem: linux
  kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
  kubeProxyVersion: {{ printf "kwok-%s" Version | Quote }}
  containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}
  kernelVersion: {{ printf "kwok-%s" Version | Quote }}
  bootID: ""
  machineID: ""
  osImage: ""
  systemUUID: ""
phase: Running
`,
  },
});

/**
 * Liveness comes from the node Lease that kwok renews (`--node-lease-duration-seconds`); the
 * conditions are refreshed rarely, as a kubelet with leases does.
 */
const nodeHeartbeat = stage('signet-node-heartbeat', {
  kind: 'Node',
  match: [{ key: READY_STATUS, operator: 'In', values: ['True'] }],
  delayMs: 5 * 60_000,
  next: { statusTemplate: NODE_CONDITIONS },
});

/** A scheduled Pod is Running and Ready at once; every container reports running. */
const podReady = stage('signet-pod-ready', {
  kind: 'Pod',
  match: [
    NOT_DELETED,
    { key: '.status.phase', operator: 'In', values: ['Pending'] },
    { key: READY_STATUS, operator: 'NotIn', values: ['True'] },
  ],
  next: {
    statusTemplate: `{{ $now := Now }}
phase: Running
startTime: {{ $now | Quote }}
conditions:
{{ range list "Initialized" "ContainersReady" "Ready" }}
- type: {{ . | Quote }}
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
{{ end }}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: true
  started: true
  restartCount: 0
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ end }}
initContainerStatuses:
{{ range .spec.initContainers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: true
  restartCount: 0
  state:
    terminated:
      exitCode: 0
      reason: Completed
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
{{ end }}
{{ with PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
podIP: {{ . | Quote }}
podIPs:
- ip: {{ . | Quote }}
{{ end }}
`,
  },
});

/** A Job's Pod finishes successfully right after it started, so Jobs and CronJobs complete. */
const jobPodSucceeded = stage('signet-job-pod-succeeded', {
  kind: 'Pod',
  match: [
    NOT_DELETED,
    { key: '.status.phase', operator: 'In', values: ['Running'] },
    { key: '.metadata.ownerReferences.[].kind', operator: 'In', values: ['Job'] },
  ],
  next: {
    statusTemplate: `{{ $now := Now }}
phase: Succeeded
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: false
  started: false
  restartCount: 0
  state:
    terminated:
      exitCode: 0
      reason: Completed
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
{{ end }}
`,
  },
});

/** There is no kubelet to finish a graceful deletion: kwok removes a Pod once it is being deleted. */
const podDeleted = stage('signet-pod-deleted', {
  kind: 'Pod',
  match: [{ key: '.metadata.deletionTimestamp', operator: 'Exists' }],
  next: { delete: true },
});

/** The stage documents for `kwok --config`. */
export function kwokStagesYaml(): string {
  return [nodeReady, nodeHeartbeat, podReady, jobPodSucceeded, podDeleted]
    .map((object) => stringify(object, { lineWidth: 0 }))
    .join('---\n');
}
