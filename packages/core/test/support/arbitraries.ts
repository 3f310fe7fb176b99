// fast-check generators for workloads of every kind and for the edits an UPDATE can make.
import { type KubeObject, WORKLOADS, type WorkloadKind } from '@signet/k8s-types';
import fc from 'fast-check';
import { type Json, setAt } from './workloads.js';

export const IMAGES = [
  'alpine',
  'alpine:3.20',
  'docker.io/library/nginx:1.27',
  'registry.example:5000/team/app:v1',
  'localhost:5000/dev/app',
  `ghcr.io/org/tool@sha256:${'b'.repeat(64)}`,
  `ghcr.io/org/tool:2@sha256:${'c'.repeat(64)}`,
] as const;

const imageArb = fc.constantFrom(...IMAGES);
const labelsArb = fc.dictionary(
  fc.constantFrom('app', 'tier', 'team', 'pod-template-hash'),
  fc.constantFrom('a', 'b', ''),
  {
    maxKeys: 3,
  },
);

function containerArb(name: string): fc.Arbitrary<Json> {
  return fc.record(
    {
      name: fc.constant(name),
      image: imageArb,
      args: fc.array(fc.constantFrom('--a', '--b=1'), { maxLength: 2 }),
      env: fc.array(fc.record({ name: fc.constantFrom('A', 'B'), value: fc.string({ maxLength: 3 }) }), {
        maxLength: 2,
      }),
      resources: fc.constantFrom({}, { limits: { cpu: '1' } }, { requests: {} }),
      imagePullPolicy: fc.constantFrom('IfNotPresent', 'Always'),
    },
    { requiredKeys: ['name', 'image'] },
  );
}

function listArb(prefix: string, min: number, max: number, item: (name: string) => fc.Arbitrary<Json>) {
  return fc
    .integer({ min, max })
    .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => item(`${prefix}${i}`))))
    .map((items): Json[] => [...items]);
}

const volumeArb = (name: string): fc.Arbitrary<Json> =>
  fc.oneof(
    fc.record({
      name: fc.constant(name),
      image: fc.record({ reference: imageArb, pullPolicy: fc.constant('IfNotPresent') }),
    }),
    fc.record({ name: fc.constant(name), emptyDir: fc.constant({}) }),
  );

export const podSpecArb: fc.Arbitrary<Json> = fc.record(
  {
    containers: listArb('c', 1, 3, containerArb),
    initContainers: listArb('i', 0, 2, containerArb),
    volumes: listArb('v', 0, 2, volumeArb),
    restartPolicy: fc.constantFrom('Always', 'Never'),
    nodeSelector: labelsArb,
    tolerations: fc.constantFrom([], [{ key: 'k', operator: 'Exists' }]),
  },
  { requiredKeys: ['containers'] },
);

export interface WorkloadParts {
  readonly spec: Json;
  readonly templateLabels: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly scale: number;
  readonly controller: boolean;
  readonly finalizers: readonly string[];
  readonly status: Json;
}

export const partsArb: fc.Arbitrary<WorkloadParts> = fc.record({
  spec: podSpecArb,
  templateLabels: labelsArb,
  labels: labelsArb,
  annotations: labelsArb,
  scale: fc.integer({ min: 0, max: 10 }),
  controller: fc.boolean(),
  finalizers: fc.array(fc.constantFrom('example.com/a', 'batch.kubernetes.io/job-tracking'), {
    maxLength: 2,
  }),
  status: fc.record({
    replicas: fc.integer({ min: 0, max: 10 }),
    phase: fc.constantFrom('Running', 'Succeeded'),
  }),
});

/** Builds an object of `kind` from generated parts. */
export function build(kind: WorkloadKind, parts: WorkloadParts): KubeObject {
  const info = WORKLOADS[kind];
  const metadata: Json = { name: 'w', namespace: 'ns', labels: parts.labels, annotations: parts.annotations };
  if (parts.controller) {
    metadata.ownerReferences = [
      { apiVersion: 'apps/v1', kind: 'Owner', name: 'o', uid: 'u', controller: true },
    ];
  }
  if (parts.finalizers.length > 0) metadata.finalizers = parts.finalizers;
  const object: Json = { kind, metadata, status: parts.status };
  if (info.templatePath === null) {
    object.spec = structuredClone(parts.spec);
  } else {
    setAt(object, info.templatePath, {
      metadata: { labels: parts.templateLabels },
      spec: structuredClone(parts.spec),
    });
  }
  if (info.scalePath !== null) setAt(object, info.scalePath, parts.scale);
  return object as KubeObject;
}

/** Edits that never touch the pod template or raise the scale. */
export interface OtherEdits {
  readonly labels: Readonly<Record<string, string>> | null;
  readonly annotations: Readonly<Record<string, string>> | null;
  readonly controller: boolean | null;
  readonly finalizers: readonly string[] | null;
  readonly status: Json | null;
  readonly specField: readonly [string, unknown] | null;
  readonly scaleDrop: number;
}

export const otherEditsArb: fc.Arbitrary<OtherEdits> = fc.record({
  labels: fc.option(labelsArb),
  annotations: fc.option(labelsArb),
  controller: fc.option(fc.boolean()),
  finalizers: fc.option(fc.array(fc.constant('example.com/b'), { maxLength: 1 })),
  status: fc.option(fc.record({ readyReplicas: fc.nat(5) })),
  specField: fc.option(
    fc.tuple(
      fc.constantFrom(
        'minReadySeconds',
        'paused',
        'revisionHistoryLimit',
        'suspend',
        'activeDeadlineSeconds',
      ),
      fc.oneof(fc.nat(100), fc.boolean()),
    ),
  ),
  scaleDrop: fc.nat(4),
});

/** Applies edits outside the template (for a Pod: outside its image fields). */
export function applyOtherEdits(kind: WorkloadKind, parts: WorkloadParts, edits: OtherEdits): KubeObject {
  const next: WorkloadParts = {
    ...parts,
    labels: edits.labels ?? parts.labels,
    annotations: edits.annotations ?? parts.annotations,
    controller: edits.controller ?? parts.controller,
    finalizers: edits.finalizers ?? parts.finalizers,
    status: edits.status ?? parts.status,
    scale: Math.max(0, parts.scale - edits.scaleDrop),
  };
  const object = build(kind, next) as Json;
  if (edits.specField !== null) {
    const [key, value] = edits.specField;
    // For a Pod, `spec` is the pod spec: these keys are not image fields there either.
    (object.spec as Json)[key] = value;
  }
  return object as KubeObject;
}

/** A change that makes the pod template semantically different. */
export type TemplateChange = 'image' | 'env' | 'label' | 'add-container' | 'replace-init';

export const templateChangeArb = fc.constantFrom<TemplateChange>(
  'image',
  'env',
  'label',
  'add-container',
  'replace-init',
);

export function changeTemplate(parts: WorkloadParts, change: TemplateChange, pick: number): WorkloadParts {
  const spec = structuredClone(parts.spec) as { containers: Json[]; initContainers?: Json[] };
  const target = spec.containers[pick % spec.containers.length] as Json;
  switch (change) {
    case 'image':
      target.image = IMAGES[(IMAGES.indexOf(target.image as (typeof IMAGES)[number]) + 1) % IMAGES.length];
      break;
    case 'env':
      target.env = [...((target.env as Json[] | undefined) ?? []), { name: 'ADDED', value: 'x' }];
      break;
    case 'label':
      return { ...parts, templateLabels: { ...parts.templateLabels, changed: 'yes' } };
    case 'add-container':
      spec.containers.push({ name: 'added', image: 'registry.example/added:1' });
      break;
    case 'replace-init':
      spec.initContainers = [{ name: 'only-init', image: 'registry.example/init:9' }];
      break;
  }
  return { ...parts, spec };
}
