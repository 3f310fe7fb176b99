// Drain risk: whether a workload's next replacement Pod (a node drained, a Pod evicted or deleted)
// would be admitted now, and whether only a verification record would admit it (stale-if-error:
// the registry cannot be asked, and the record will stop admitting once it is older than the grace
// period). Judged by the webhook's own path, as a Pod CREATE from the workload's template, owned by
// the workload, as its controller would create it.
import { formatAge, type ImageVerdict } from '@signet/core';
import { type KubeObject, podTemplateOf, workloadForKind } from '@signet/k8s-types';
import type { AdmissionService } from '../admission/admission-service.js';
import { createRequestFor } from '../admission/create-request.js';
import { judgeCreate } from '../admission/judge-create.js';
import type { AuditSubject } from './subjects.js';

export interface DrainRisk {
  /**
   * `admitted`: verified now; `grace`: admitted only on a verification record (a registry outage
   * that outlasts the record's grace period wedges the drain); `denied`: the replacement would be
   * refused now (a PodDisruptionBudget then blocks the drain).
   */
  readonly next: 'admitted' | 'grace' | 'denied';
  /** Why it is denied, or the record's age for `grace`. */
  readonly reason?: string;
  /** For `grace`: the age of the oldest record it rests on (milliseconds), the first to expire. */
  readonly recordAgeMs?: number;
}

function groupOf(apiVersion: string | undefined): string {
  const slash = (apiVersion ?? '').indexOf('/');
  return slash < 0 ? '' : (apiVersion ?? '').slice(0, slash);
}

/** The Pod a workload's controller would create next, or `undefined` for a Pod (nothing recreates a bare one). */
export function replacementPodOf(subject: AuditSubject): KubeObject | undefined {
  const object = subject.object;
  const info = workloadForKind(groupOf(object.apiVersion), object.kind ?? '');
  if (info === undefined || info.templatePath === null) return undefined;
  const template = podTemplateOf(info, object) as
    | { metadata?: Record<string, unknown>; spec?: unknown }
    | undefined;
  if (template?.spec === undefined) return undefined;
  const uid = object.metadata?.uid;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...(template.metadata ?? {}),
      generateName: `${subject.name}-`,
      namespace: subject.namespace,
      ownerReferences: [
        {
          apiVersion: object.apiVersion ?? '',
          kind: subject.kind,
          name: subject.name,
          uid: typeof uid === 'string' ? uid : '',
          controller: true,
        },
      ],
    },
    spec: template.spec,
  } as KubeObject;
}

/** The age of the oldest record the verdicts were admitted on, if any policy was admitted on one. */
function oldestGraceAge(verdicts: readonly ImageVerdict[]): number | undefined {
  let oldest: number | undefined;
  for (const verdict of verdicts) {
    if (verdict.outcome.kind !== 'policies') continue;
    for (const policy of verdict.outcome.verdicts) {
      if (!policy.passed || policy.grace === undefined) continue;
      oldest = oldest === undefined ? policy.grace.ageMs : Math.max(oldest, policy.grace.ageMs);
    }
  }
  return oldest;
}

/** Judges the workload's next replacement Pod; `undefined` for subjects nothing recreates. */
export async function drainRiskOf(
  service: Pick<AdmissionService, 'review'>,
  subject: AuditSubject,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<DrainRisk | undefined> {
  const pod = replacementPodOf(subject);
  if (pod === undefined) return undefined;
  const request = createRequestFor(pod, { namespace: subject.namespace, username: 'signet-audit' });
  if (request === undefined) return undefined;
  let judged: Awaited<ReturnType<typeof judgeCreate>>;
  try {
    judged = await judgeCreate(service, request, timeoutMs, signal);
  } catch (error) {
    return { next: 'denied', reason: `cannot be judged: ${(error as Error).message}` };
  }
  const { validated } = judged;
  if (!validated.response.allowed) {
    const message = validated.response.status?.message ?? validated.reason ?? validated.rule;
    return { next: 'denied', reason: `${validated.rule}: ${message.split('\n')[0]}` };
  }
  // The oldest record any of its policies rests on is the first to stop admitting.
  const age = oldestGraceAge(validated.verdicts ?? []);
  if (age === undefined) return { next: 'admitted' };
  return { next: 'grace', reason: `on a verification record ${formatAge(age)} old`, recordAgeMs: age };
}
