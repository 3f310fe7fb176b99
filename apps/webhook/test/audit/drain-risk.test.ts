// The audit's drain risk (issue 24): a workload's next replacement Pod judged by the webhook's own
// path. Policies from YAML; a registry that is not there (a closed loopback port) stands for an
// outage; the verification records are a map answering as the cluster store would (the store
// itself runs against a real API server in e2e/test/verification-records.test.ts).
import { generateKeyPairSync } from 'node:crypto';
import type { PassRecord } from '@signet/core';
import type { KubeObject } from '@signet/k8s-types';
import { describe, expect, it } from 'vitest';
import { assembleAdmission } from '../../src/admission/assemble-admission.js';
import { auditReport } from '../../src/audit/audit-report.js';
import { auditTable } from '../../src/audit/audit-table.js';
import { auditSubjectsWith } from '../../src/audit/auditor.js';
import { drainRiskOf, replacementPodOf } from '../../src/audit/drain-risk.js';
import { auditSubjects } from '../../src/audit/subjects.js';
import { createLogger } from '../../src/logger.js';
import { SignetMetrics } from '../../src/metrics.js';
import { parsePolicyYaml } from '../../src/policy/policy-file.js';
import { compileSnapshot } from '../../src/policy/policy-store.js';

const DEAD = '127.0.0.1:1';
const DIGEST = `sha256:${'d'.repeat(64)}`;
const HOUR = 3_600_000;
const key = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .publicKey.export({ format: 'pem', type: 'spki' })
  .toString()
  .trim()
  .split('\n')
  .join('\n          ');

const POLICIES = `
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: release, uid: u-1 }
spec:
  images: [{ glob: "${DEAD}/**" }]
  authorities:
    - key:
        data: |
          ${key}
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: allowed }
spec:
  images: [{ glob: "registry.example/ok/**" }]
  authorities: [{ static: { action: pass } }]
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: refused }
spec:
  images: [{ glob: "registry.example/bad/**" }]
  authorities: [{ static: { action: fail } }]
`;

function deployment(name: string, image: string): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'shop', uid: `u-${name}` },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
    },
  } as KubeObject;
}

async function admissionWith(records: Map<string, number>) {
  const { snapshot } = await compileSnapshot(parsePolicyYaml(POLICIES, 'signet-system'), {
    namespace: 'signet-system',
  });
  if (snapshot === undefined) throw new Error('policies did not compile');
  const fingerprint = snapshot.policySet.policies.find((p) => p.name === 'release')?.compiled.revision ?? '';
  const admission = assembleAdmission({
    logger: createLogger({ level: 'silent' }),
    metrics: new SignetMetrics({ defaultMetrics: false }),
    insecureRegistries: [DEAD],
    resolveDigests: true,
    records: {
      grace: {
        defaultGraceMs: 24 * HOUR,
        find: (policy, fp, image): PassRecord | undefined => {
          const age = records.get(image);
          if (age === undefined || fp !== fingerprint) return undefined;
          const [repository = '', digest = ''] = image.split('@');
          return { repository, digest, policy, fingerprint: fp, verifiedAt: Date.now() - age };
        },
        graced: () => undefined,
        refused: () => undefined,
      },
    },
  });
  admission.store.install(admission.store.begin(), snapshot);
  return admission;
}

describe('drain risk', () => {
  it("the replacement Pod is the template's, owned by the workload; a bare Pod has none", () => {
    const [subject] = auditSubjects([deployment('web', 'registry.example/ok/app:1')], { namespace: 'shop' });
    if (subject === undefined) throw new Error('no subject');
    expect(replacementPodOf(subject)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        labels: { app: 'web' },
        generateName: 'web-',
        namespace: 'shop',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u-web', controller: true },
        ],
      },
      spec: { containers: [{ name: 'app', image: 'registry.example/ok/app:1' }] },
    });
    const [pod] = auditSubjects(
      [
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'p', namespace: 'shop' },
          spec: { containers: [] },
        } as KubeObject,
      ],
      { namespace: 'shop' },
    );
    if (pod === undefined) throw new Error('no subject');
    expect(replacementPodOf(pod)).toBeUndefined();
  });

  it('admitted, only on a verification record (with its age), or denied', async () => {
    const records = new Map([[`${DEAD}/team/app@${DIGEST}`, 3 * HOUR + 30_000]]);
    const admission = await admissionWith(records);
    const subjects = auditSubjects(
      [
        deployment('ok', `registry.example/ok/app@sha256:${'a'.repeat(64)}`),
        deployment('bad', `registry.example/bad/app@sha256:${'b'.repeat(64)}`),
        deployment('recorded', `${DEAD}/team/app@${DIGEST}`),
        deployment('unrecorded', `${DEAD}/team/other@${DIGEST}`),
        deployment('by-tag', `${DEAD}/team/app:v1`),
      ],
      { namespace: 'shop' },
    );
    const risks = await Promise.all(subjects.map((s) => drainRiskOf(admission.service, s, 5_000)));
    expect(risks.map((r) => r?.next)).toEqual(['admitted', 'denied', 'grace', 'denied', 'denied']);
    expect(risks[2]).toMatchObject({
      reason: 'on a verification record 3h old',
      recordAgeMs: expect.any(Number),
    });
    expect(risks[3]?.reason).toMatch(/^infrastructure: /);
    // A tag cannot be pinned while the registry is down, and a Pod must run a digest.
    expect(risks[4]?.reason).toMatch(/not pinned to a digest/);

    const audited = await auditSubjectsWith(subjects, {
      service: admission.service,
      concurrency: 2,
      timeoutMs: 5_000,
      drain: true,
    });
    // The audit's own result for the recorded image stays `infrastructure`: not verified now.
    expect(audited[2]?.findings[0]).toMatchObject({
      result: 'infrastructure',
      reason: expect.stringMatching(/admitted on a verification record 3h old: stale-if-error\)$/),
    });
    const report = auditReport(audited, []);
    expect(report.drain).toEqual({ admitted: 1, grace: 1, denied: 3 });
    const table = auditTable(report);
    expect(table).toMatch(
      /^Deployment\/recorded\s+Deployment\/recorded\s+\S+\s+release\s+infrastructure\s+grace \(3h old record\)\s/m,
    );
    expect(table).toContain(
      'next Pod of 5 workloads (a drain, an eviction): 1 admitted, 1 only on a verification record, 3 denied',
    );
  });
});
