// Judges audit subjects through the admission pipeline (as a CREATE in an opted-in namespace),
// a bounded number at a time. Each distinct digest is verified once: passes come from the shared
// verification cache, identical verifications in flight are joined.
import type { AdmissionService } from '../admission/admission-service.js';
import { createRequestFor } from '../admission/create-request.js';
import { judgeCreate } from '../admission/judge-create.js';
import { type DrainRisk, drainRiskOf } from './drain-risk.js';
import { type AuditFinding, type AuditResult, findingsOf, worstOf } from './findings.js';
import type { AuditSubject, WorkloadRef } from './subjects.js';

export interface ObjectAudit {
  readonly namespace: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string | undefined;
  readonly owner: WorkloadRef;
  readonly result: AuditResult;
  readonly findings: readonly AuditFinding[];
  /** For a workload with a pod template, when asked for: would its next replacement Pod be admitted now? */
  readonly drain?: DrainRisk;
}

export interface AuditProgress {
  readonly done: number;
  readonly total: number;
}

export interface AuditorOptions {
  readonly service: Pick<AdmissionService, 'review'>;
  /** Objects judged at once (each may verify several images); bounds registry load. */
  readonly concurrency: number;
  /** Time allowed per object and endpoint (the webhook's budget rules apply). */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: AuditProgress) => void;
  /** Also judge each workload's next replacement Pod (`signet audit`'s drain risk). */
  readonly drain?: boolean;
}

/** The audit of every subject, in the subjects' order. */
export async function auditSubjectsWith(
  subjects: readonly AuditSubject[],
  options: AuditorOptions,
): Promise<ObjectAudit[]> {
  const results: ObjectAudit[] = new Array(subjects.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (;;) {
      const index = next++;
      const subject = subjects[index];
      if (subject === undefined) return;
      options.signal?.throwIfAborted();
      results[index] = await auditOne(subject, options);
      done++;
      options.onProgress?.({ done, total: subjects.length });
    }
  };
  const workers = Math.max(1, Math.min(options.concurrency, subjects.length));
  await Promise.all(Array.from({ length: workers }, worker));
  return results;
}

async function auditOne(subject: AuditSubject, options: AuditorOptions): Promise<ObjectAudit> {
  const base = {
    namespace: subject.namespace,
    kind: subject.kind,
    name: subject.name,
    uid: subject.uid,
    owner: subject.owner,
  };
  const request = createRequestFor(subject.object, {
    namespace: subject.namespace,
    username: 'signet-audit',
  });
  if (request === undefined) return { ...base, result: 'pass', findings: [] };
  let findings: AuditFinding[];
  try {
    const judgement = await judgeCreate(options.service, request, options.timeoutMs, options.signal);
    findings = findingsOf(judgement, subject.specImages);
  } catch (error) {
    // The webhook denies what it cannot read; so does the audit, saying why.
    const reason = `cannot be judged: ${(error as Error).message}`;
    findings = [{ path: '', image: '', policy: '', result: 'fail', reason }];
  }
  const drain = options.drain
    ? await drainRiskOf(options.service, subject, options.timeoutMs, options.signal)
    : undefined;
  return { ...base, result: worstOf(findings.map((f) => f.result)), findings, ...(drain ? { drain } : {}) };
}
