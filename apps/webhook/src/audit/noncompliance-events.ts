// One Warning Event per workload that newly fails policy (it was not failing at the previous scan,
// or in the reports a previous leader left), on the workload itself: `kubectl describe` shows it.
// Bounded per scan, so a new policy that fails a thousand workloads does not flood the API server.
import { createWarningEvent } from '../kube/events.js';
import type { KubeApi } from '../kube/kube-api.js';
import type { Logger } from '../logger.js';
import type { ObjectAudit } from './auditor.js';
import { API_VERSIONS } from './policy-reports.js';

export const NON_COMPLIANT_REASON = 'NonCompliantImage';

export interface FailingWorkload {
  readonly namespace: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string | undefined;
  /** What fails, for the Event's message. */
  readonly message: string;
}

/** The failing workloads of `audits`, keyed `namespace/Kind/name`. */
export function failingWorkloads(audits: readonly ObjectAudit[]): Map<string, FailingWorkload> {
  const failing = new Map<string, FailingWorkload>();
  for (const audit of audits) {
    const finding = audit.findings.find((f) => f.result === 'fail');
    if (finding === undefined) continue;
    const key = `${audit.namespace}/${audit.owner.kind}/${audit.owner.name}`;
    if (failing.has(key)) continue;
    const policy = finding.policy ? `policy "${finding.policy}"` : 'admission';
    failing.set(key, {
      namespace: audit.namespace,
      kind: audit.owner.kind,
      name: audit.owner.name,
      uid: audit.owner.uid,
      message: `${audit.kind} ${audit.name} would be denied: ${finding.image || 'the object'} fails ${policy}: ${finding.reason}`,
    });
  }
  return failing;
}

export class NonComplianceEvents {
  readonly #api: KubeApi;
  readonly #logger: Logger;
  readonly #maxPerScan: number;

  constructor(api: KubeApi, logger: Logger, maxPerScan = 100) {
    this.#api = api;
    this.#logger = logger;
    this.#maxPerScan = maxPerScan;
  }

  /** Records an Event for each workload of `now` that is not in `before`; returns how many. */
  async recordNew(now: ReadonlyMap<string, FailingWorkload>, before: ReadonlySet<string>): Promise<number> {
    const fresh = [...now.entries()].filter(([key]) => !before.has(key));
    const sent = fresh.slice(0, this.#maxPerScan);
    if (fresh.length > sent.length)
      this.#logger.warn(
        { newlyFailing: fresh.length, events: sent.length },
        'more newly failing workloads than Events per scan',
      );
    const at = new Date();
    await Promise.all(
      sent.map(async ([key, workload]) => {
        try {
          await createWarningEvent(this.#api, {
            namespace: workload.namespace,
            involved: {
              apiVersion: API_VERSIONS[workload.kind] ?? 'v1',
              kind: workload.kind,
              name: workload.name,
              namespace: workload.namespace,
              ...(workload.uid ? { uid: workload.uid } : {}),
            },
            reason: NON_COMPLIANT_REASON,
            message: workload.message,
            component: 'signet-audit',
            at,
          });
        } catch (error) {
          this.#logger.warn({ err: error, workload: key }, 'could not record a non-compliance Event');
        }
      }),
    );
    return sent.length;
  }
}
