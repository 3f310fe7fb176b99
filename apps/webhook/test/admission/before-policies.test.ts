// Between start and the first policy snapshot (a restart, a slow API server), Signet answers what
// needs no policy and refuses only what needs verification. Before, every review was refused with
// 503 until policies loaded, so a restarting Signet stalled scale-downs and deletes too.
import { parseAdmissionReviewJson } from '@signet/k8s-types';
import type { ImageVerifier } from '@signet/verifier';
import { describe, expect, it } from 'vitest';
import { AdmissionService } from '../../src/admission/admission-service.js';
import { createLogger } from '../../src/logger.js';
import { SignetMetrics } from '../../src/metrics.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { LogCapture, reviewFixture } from '../helpers.js';

// Nothing here may reach verification: a verifier that throws proves it.
const verifier = {
  verify: () => {
    throw new Error('verification must not run before policies are loaded');
  },
} as unknown as ImageVerifier;

const service = new AdmissionService({
  store: new PolicyStore(),
  verifier,
  logger: createLogger({ destination: new LogCapture() }),
  metrics: new SignetMetrics({ defaultMetrics: false }),
});

const context = () => ({
  signal: new AbortController().signal,
  deadline: Date.now() + 10_000,
  budgetMs: 10_000,
});
const review = (fixture: string) => {
  const parsed = parseAdmissionReviewJson(reviewFixture(fixture));
  return parsed.request;
};

describe('before policies are loaded', () => {
  it.each(['replicaset-scale-down.json', 'deployment-status.json', 'pod-delete.json'])(
    'admits %s, which starts no container',
    async (fixture) => {
      for (const endpoint of ['validate', 'mutate'] as const) {
        const outcome = await service.review(endpoint, review(fixture), context());
        expect(outcome.response.allowed, `${endpoint} ${fixture}`).toBe(true);
        expect(outcome.decision).not.toBe('denied');
      }
    },
  );

  it.each(['pod-create.json', 'pod-ephemeralcontainers.json', 'cronjob-create.json'])(
    'refuses %s, which needs verification, with 503 and says why',
    async (fixture) => {
      const outcome = await service.review('validate', review(fixture), context());
      expect(outcome.response.allowed).toBe(false);
      expect(outcome.response.status).toMatchObject({
        code: 503,
        message: 'Signet has not loaded its policies yet',
      });
      expect(outcome).toMatchObject({
        decision: 'denied',
        rule: 'infrastructure',
        reason: 'policies not loaded',
      });
    },
  );
});
