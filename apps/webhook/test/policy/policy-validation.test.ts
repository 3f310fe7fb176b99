// POST /validate-policy on a real Signet (HTTPS, the composition root): a ClusterImagePolicy or
// TrustRoot that cannot compile is refused with the compile error; what only lacks another object
// is admitted with a warning; deleting, and writes that leave the spec alone, are never refused.
// The API server's side (kubectl apply refused, the chart's registration) is in
// e2e/test/policy-status.test.ts.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AttackTarget, startTarget } from '../attack/server.js';
import { post } from '../helpers.js';

let dir = '';
let target: AttackTarget;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signet-policy-webhook-'));
  target = await startTarget(dir);
});

afterAll(async () => {
  await target?.signet.stop(0);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const publicKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .publicKey.export({ format: 'pem', type: 'spki' })
  .toString();

function policy(
  name: string,
  authorities: unknown[],
  extra: Record<string, unknown> = {},
): { apiVersion: string; kind: string; metadata: Record<string, unknown>; spec: Record<string, unknown> } {
  return {
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name, generation: 1, ...extra },
    spec: { images: [{ glob: 'registry.example/**' }], authorities },
  };
}

function review(
  object: Record<string, unknown> & { kind: string },
  operation = 'CREATE',
  oldObject?: Record<string, unknown>,
) {
  const resource = object.kind === 'TrustRoot' ? 'trustroots' : 'clusterimagepolicies';
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${Math.random()}`,
      kind: { group: 'policy.sigstore.dev', version: 'v1beta1', kind: object.kind },
      resource: { group: 'policy.sigstore.dev', version: 'v1beta1', resource },
      name: (object.metadata as { name: string }).name,
      operation,
      userInfo: { username: 'admin' },
      object: operation === 'DELETE' ? null : object,
      oldObject: oldObject ?? null,
      dryRun: false,
    },
  });
}

async function answer(body: string) {
  const response = await post(`https://127.0.0.1:${target.port}/validate-policy`, body, target.ca);
  expect(response.status).toBe(200);
  return (
    response.json() as { response: { allowed: boolean; status?: { message: string }; warnings?: string[] } }
  ).response;
}

describe('the policy webhook', () => {
  it('admits a policy that compiles', async () => {
    const ok = await answer(review(policy('good', [{ key: { data: publicKey } }])));
    expect(ok).toMatchObject({ allowed: true });
    expect(ok.warnings).toBeUndefined();
  });

  it('refuses a policy whose key, glob, regexp or fields cannot compile, with the compile error', async () => {
    const badKey = await answer(review(policy('bad-key', [{ key: { data: 'not a key' } }])));
    expect(badKey.allowed).toBe(false);
    expect(badKey.status?.message).toMatch(/^ClusterImagePolicy "bad-key": spec\.authorities\[0\]\.key/);
    const badGlob = await answer(
      review({
        ...policy('bad-glob', [{ static: { action: 'pass' } }]),
        spec: { images: [{ glob: '[' }], authorities: [{ static: { action: 'pass' } }] },
      }),
    );
    expect(badGlob.allowed).toBe(false);
    expect(badGlob.status?.message).toContain('glob');
    const badRegexp = await answer(
      review(
        policy('bad-regexp', [
          { keyless: { identities: [{ issuer: 'https://issuer.example', subjectRegExp: '(' }] } },
        ]),
      ),
    );
    expect(badRegexp.allowed).toBe(false);
    expect(badRegexp.status?.message).toContain('keyless.identities[0]');
    expect(badRegexp.status?.message).toMatch(/invalid regular expression/i);
    const badField = await answer(review(policy('bad-field', [{ static: { action: 'maybe' } }])));
    expect(badField.allowed).toBe(false);
    expect(badField.status?.message).toContain('spec.authorities[0].static.action');
  });

  it('admits with a warning what only lacks another object (a Secret not created yet)', async () => {
    const later = await answer(
      review(policy('later', [{ name: 'team', key: { secretRef: { name: 'team-key' } } }])),
    );
    expect(later.allowed).toBe(true);
    expect(later.warnings?.[0]).toContain('authority "team": Secret signet-system/team-key not found');
  });

  it('never refuses a deletion, a write that leaves the spec alone, or an object being deleted', async () => {
    const broken = policy('broken', [{ key: { data: 'not a key' } }], {
      finalizers: ['clusterimagepolicies.policy.sigstore.dev'],
    });
    expect((await answer(review(broken, 'DELETE', broken))).allowed).toBe(true);
    const { finalizers: _gone, ...metadata } = broken.metadata;
    expect((await answer(review({ ...broken, metadata }, 'UPDATE', broken))).allowed).toBe(true);
    const deleting = {
      ...broken,
      metadata: { ...broken.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' },
    };
    expect((await answer(review(deleting, 'UPDATE', broken))).allowed).toBe(true);
    // ...while an UPDATE that changes the spec to something that still cannot compile is refused.
    const edited = { ...broken, spec: { ...broken.spec, images: [{ glob: 'other.example/**' }] } };
    expect((await answer(review(edited, 'UPDATE', broken))).allowed).toBe(false);
  });

  it('refuses a TrustRoot whose keys do not load, and admits one that does', async () => {
    const root = (publicKeyText: string) => ({
      apiVersion: 'policy.sigstore.dev/v1alpha1',
      kind: 'TrustRoot',
      metadata: { name: 'mine' },
      spec: {
        sigstoreKeys: {
          tLogs: [
            {
              baseURL: 'https://rekor.example',
              hashAlgorithm: 'sha256',
              publicKey: Buffer.from(publicKeyText).toString('base64'),
            },
          ],
        },
      },
    });
    const bad = await answer(review(root('not a key')));
    expect(bad.allowed).toBe(false);
    expect(bad.status?.message).toContain('TrustRoot "mine"');
    expect((await answer(review(root(publicKey)))).allowed).toBe(true);
  });

  it('counts its answers by kind, and /validate-policy is the only new path', async () => {
    const text = await target.metrics.registry.getSingleMetricAsString('signet_admission_requests_total');
    expect(text).toMatch(
      /endpoint="validate-policy",decision="denied",rule="invalid-policy",kind="ClusterImagePolicy"\} [1-9]/,
    );
    expect(text).toMatch(
      /endpoint="validate-policy",decision="allowed",rule="spec-unchanged",kind="ClusterImagePolicy"\} 1/,
    );
    const none = await post(`https://127.0.0.1:${target.port}/validate-policies`, '{}', target.ca);
    expect(none.status).toBe(404);
  });
});
