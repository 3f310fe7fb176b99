// Verification work is bounded: beyond what may run and wait, an image fails as infrastructure at
// once (denied in enforce mode), and a cheap decision never waits behind it. The verifier here is
// a stand-in that never answers, so that the bound, not a registry, is what is tested.

import { parseAdmissionReviewJson } from '@signet/k8s-types';
import type { ImageVerifier } from '@signet/verifier';
import { describe, expect, it } from 'vitest';
import { AdmissionService } from '../../src/admission/admission-service.js';
import { createRequestFor, podRunning } from '../../src/admission/create-request.js';
import { createLogger } from '../../src/logger.js';
import { SignetMetrics } from '../../src/metrics.js';
import { parsePolicyYaml } from '../../src/policy/policy-file.js';
import { compileSnapshot, PolicyStore } from '../../src/policy/policy-store.js';
import { reviewFixture } from '../helpers.js';

describe('bounded verification work', () => {
  it('fails what cannot get a slot as infrastructure, and keeps admitting scale-downs', async () => {
    const store = new PolicyStore();
    const policies = parsePolicyYaml(
      'apiVersion: policy.sigstore.dev/v1beta1\nkind: ClusterImagePolicy\nmetadata: {name: all}\nspec:\n  images: [{glob: "**"}]\n  authorities: [{static: {action: pass}}]\n',
      'x',
    );
    const { snapshot } = await compileSnapshot(policies, { namespace: 'x' });
    if (!snapshot) throw new Error('no snapshot');
    store.install(store.begin(), snapshot);
    const hanging = {
      verifyImage: () => new Promise(() => undefined),
      resolveDigest: () => new Promise(() => undefined),
    };
    const service = new AdmissionService({
      store,
      verifier: hanging as unknown as ImageVerifier,
      logger: createLogger({ level: 'silent' }),
      metrics: new SignetMetrics({ defaultMetrics: false }),
      maxConcurrentVerifications: 1,
      maxQueuedVerifications: 0,
    });
    const context = () => ({
      signal: new AbortController().signal,
      deadline: Date.now() + 10_000,
      budgetMs: 10_000,
    });
    const pod = (n: number) =>
      createRequestFor(podRunning(`registry.example/app${n}@sha256:${'a'.repeat(64)}`, 'team'), {
        namespace: 'team',
      });
    void service.review('validate', pod(1) as never, context());
    const refused = await service.review('validate', pod(2) as never, context());
    expect(refused).toMatchObject({ decision: 'denied', rule: 'infrastructure' });
    expect(refused.response.status?.message).toMatch(
      /policy "all" \(enforce\): infrastructure failure: Signet is verifying 1 images and has 0 waiting; retry$/,
    );
    const scaleDown = parseAdmissionReviewJson(
      Buffer.from(reviewFixture('replicaset-scale-down.json')),
    ).request;
    expect(await service.review('validate', scaleDown, context())).toMatchObject({
      decision: 'allowed',
      rule: 'scale-down',
    });
  });
});
