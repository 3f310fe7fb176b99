// POST /validate-policy for Signet's namespaced objects, on a real Signet (HTTPS, the composition
// root): an ImagePolicy that would loosen the cluster is refused naming the field, as is an
// exception without a reason, already expired or meant to live longer than the maximum.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { parsePolicyYaml } from '../../src/policy/policy-file.js';
import { policyValidator } from '../../src/policy/policy-validation.js';
import { ValidationCapacity } from '../../src/policy/validation-capacity.js';
import { type AttackTarget, startTarget } from '../attack/server.js';
import { post } from '../helpers.js';

let dir = '';
let target: AttackTarget;
const HOUR = 3_600_000;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signet-namespaced-webhook-'));
  // A maximum lifetime of a week, so that "too long" is easy to write.
  target = await startTarget(dir, { 'exception-max-lifetime': '168h' });
});

afterAll(async () => {
  await target?.signet.stop(0);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const publicKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .publicKey.export({ format: 'pem', type: 'spki' })
  .toString();

type Json = Record<string, unknown>;

function imagePolicy(spec: Json, namespace = 'team-a'): Json {
  return {
    apiVersion: 'policy.signet.dev/v1alpha1',
    kind: 'ImagePolicy',
    metadata: { name: 'ci', namespace, generation: 1 },
    spec: { images: [{ glob: 'registry.example/**' }], authorities: [{ key: { data: publicKey } }], ...spec },
  };
}

function exception(spec: Json, metadata: Json = {}): Json {
  return {
    apiVersion: 'policy.signet.dev/v1alpha1',
    kind: 'ImagePolicyException',
    metadata: { name: 'hotfix', namespace: 'team-a', generation: 1, ...metadata },
    spec: {
      images: [{ glob: 'registry.example/team-a/hotfix*' }],
      policies: [{ kind: 'ClusterImagePolicy', name: 'all' }],
      reason: 'INC-1',
      expires: new Date(Date.now() + 24 * HOUR).toISOString(),
      ...spec,
    },
  };
}

function review(object: Json, options: { group?: string; operation?: string; oldObject?: Json } = {}) {
  const kind = object.kind as string;
  const group = options.group ?? 'policy.signet.dev';
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${Math.random()}`,
      kind: { group, version: 'v1alpha1', kind },
      resource: { group, version: 'v1alpha1', resource: `${kind.toLowerCase()}s` },
      name: (object.metadata as { name: string }).name,
      namespace: (object.metadata as { namespace: string }).namespace,
      operation: options.operation ?? 'CREATE',
      userInfo: { username: 'alice' },
      object,
      oldObject: options.oldObject ?? null,
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

/** Admitted without a warning. */
function expectClean(response: { allowed: boolean; warnings?: string[] }) {
  expect(response.allowed).toBe(true);
  expect(response.warnings).toBeUndefined();
}

describe('the policy webhook on ImagePolicies', () => {
  it('admits one that only adds requirements, reading a Secret of its own namespace', async () => {
    expectClean(await answer(review(imagePolicy({}))));
    const secret = await answer(
      review(imagePolicy({ authorities: [{ key: { secretRef: { name: 'ci-key' } } }] })),
    );
    expect(secret.allowed).toBe(true);
    // Applying a directory must not depend on its order: the Secret may come next.
    expect(secret.warnings?.[0]).toContain('Secret team-a/ci-key not found');
  });

  it.each([
    [{ mode: 'warn' }, 'spec.mode: an ImagePolicy only adds requirements, so it enforces'],
    [
      { authorities: [{ static: { action: 'pass' } }] },
      'spec.authorities[0].static.action: an ImagePolicy cannot pass images unverified',
    ],
    [
      { authorities: [{ key: { secretRef: { name: 'cosign-pub', namespace: 'signet-system' } } }] },
      'spec.authorities[0].key.secretRef.namespace: an ImagePolicy reads Secrets of its own namespace "team-a" only, got "signet-system"',
    ],
    [
      { authorities: [{ key: { kms: 'hashivault://release' } }] },
      "spec.authorities[0].key.kms: a KMS key is read with Signet's own cloud identity",
    ],
    [
      {
        policy: {
          type: 'cel',
          remote: { url: 'https://169.254.169.254/latest', sha256sum: 'ab'.repeat(32) },
        },
      },
      'spec.policy.remote: an ImagePolicy cannot make Signet fetch a URL',
    ],
    [{ images: [{ glob: 'bad glob' }] }, 'ImagePolicy "team-a/ci" spec.images[0].glob: invalid glob'],
    [{ policy: { type: 'cel', data: 'this is not CEL' } }, 'spec.policy'],
  ])('refuses one that would loosen the cluster or cannot compile (%#)', async (spec, message) => {
    const refused = await answer(review(imagePolicy(spec)));
    expect(refused.allowed).toBe(false);
    expect(refused.status?.message).toContain(message);
  });

  it("leaves another project's ImagePolicy alone, and never refuses a write that keeps the spec", async () => {
    const flux = { ...imagePolicy({ mode: 'warn' }), apiVersion: 'image.toolkit.fluxcd.io/v1beta2' };
    expectClean(await answer(review(flux, { group: 'image.toolkit.fluxcd.io' })));
    const loose = imagePolicy({ mode: 'warn' });
    const relabelled = { ...loose, metadata: { ...(loose.metadata as Json), labels: { a: 'b' } } };
    expectClean(await answer(review(relabelled, { operation: 'UPDATE', oldObject: loose })));
  });
});

describe('the policy webhook on ImagePolicyExceptions', () => {
  it('admits one within the maximum lifetime, warning of policies that do not exist (yet)', async () => {
    expect(await answer(review(exception({}))));
    const unknown = await answer(
      review(
        exception({
          policies: [
            { kind: 'ClusterImagePolicy', name: 'none' },
            { kind: 'ImagePolicy', name: 'ci' },
          ],
        }),
      ),
    );
    expect(unknown.allowed).toBe(true);
    expect(unknown.warnings).toEqual([
      'spec.policies: there is no ClusterImagePolicy "none"; the exception applies to it once it exists',
      'spec.policies: there is no ImagePolicy "ci" in team-a; the exception applies to it once it exists',
    ]);
  });

  it.each([
    [{ reason: '' }, 'spec.reason: must say why the exception exists'],
    [{ reason: undefined }, 'spec.reason: required string'],
    [{ expires: undefined }, 'spec.expires: required string'],
    [{ expires: 'next friday' }, 'spec.expires: must be an RFC 3339 time'],
    [{ images: [{ glob: 'a b' }] }, 'ImagePolicyException "team-a/hotfix" spec.images[0].glob: invalid glob'],
    [
      { expires: new Date(Date.now() - HOUR).toISOString() },
      'has passed; an expired exception applies to nothing',
    ],
    [
      { expires: new Date(Date.now() + 169 * HOUR).toISOString() },
      "is more than 168h after the exception's creation (now), the longest an exception may live here",
    ],
  ])('refuses one that is malformed, expired or too long-lived (%#)', async (spec, message) => {
    const refused = await answer(review(exception(spec)));
    expect(refused.allowed).toBe(false);
    expect(refused.status?.message).toContain(message);
  });

  it('measures the lifetime from the creation: an update cannot push the expiry past the maximum', async () => {
    const created = new Date(Date.now() - 100 * HOUR).toISOString();
    const old = exception({}, { creationTimestamp: created });
    const extended = exception(
      { expires: new Date(Date.now() + 100 * HOUR).toISOString() },
      { creationTimestamp: created },
    );
    const refused = await answer(review(extended, { operation: 'UPDATE', oldObject: old }));
    expect(refused.allowed).toBe(false);
    expect(refused.status?.message).toContain(`after the exception's creation (${created})`);
    const shortened = exception(
      { expires: new Date(Date.now() + 60 * HOUR).toISOString() },
      { creationTimestamp: created },
    );
    expectClean(await answer(review(shortened, { operation: 'UPDATE', oldObject: old })));
  });
});

describe('the policy webhook on a cluster, where a team namespace is read by reference only', () => {
  // Signet reads a team's Secrets and ConfigMaps once a stored ImagePolicy names them: what a new
  // one names is not in the view yet, and is not taken for missing.
  const view = parsePolicyYaml(
    `apiVersion: v1
kind: Secret
metadata: { name: read-key, namespace: team-a }
stringData: { cosign.pub: ${JSON.stringify(publicKey)} }
`,
    'signet-system',
  );
  const capacity = new ValidationCapacity({ logger: createLogger({ level: 'silent' }), concurrency: 1 });
  const validate = (readsInputsByReference: boolean, spec: Json) =>
    policyValidator({
      view: () => view,
      compile: { namespace: 'signet-system' },
      capacity,
      readsInputsByReference,
    })('validate-policy', JSON.parse(review(imagePolicy(spec))).request, {
      signal: new AbortController().signal,
      deadline: Date.now() + 20_000,
      budgetMs: 20_000,
    });
  afterAll(async () => {
    await capacity.close();
  });

  it('admits a Secret or ConfigMap it has not read, saying its status will tell; still checks the rest', async () => {
    const key = (name: string) => ({ authorities: [{ key: { secretRef: { name } } }] });
    expect((await validate(true, key('read-key'))).response).toEqual({ allowed: true });
    const unread = await validate(true, key('new-key'));
    expect(unread.response.warnings).toEqual([
      'Secret team-a/new-key: read by Signet once this ImagePolicy is stored; its status says whether it compiled',
    ]);
    // From files, the view is whole: a Secret not in it does not exist.
    expect((await validate(false, key('new-key'))).response.warnings?.[0]).toContain(
      'Secret team-a/new-key not found',
    );
    const program = { policy: { type: 'cel', configMapRef: { name: 'rules', key: 'p' } } };
    expect((await validate(true, program)).response).toEqual({
      allowed: true,
      warnings: [
        'ConfigMap team-a/rules: read by Signet once this ImagePolicy is stored; its status says whether it compiled',
      ],
    });
    expect((await validate(false, program)).response).toMatchObject({
      allowed: false,
      status: { message: expect.stringContaining('ConfigMap team-a/rules not found') },
    });
    // What is wrong whatever the Secret holds is still refused.
    const badGlob = await validate(true, { ...key('new-key'), images: [{ glob: 'bad glob' }] });
    expect(badGlob.response.allowed).toBe(false);
  });
});
