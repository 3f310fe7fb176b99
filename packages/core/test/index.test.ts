// Pins the package's runtime surface: a change here is a change of the published API, and
// belongs in a changeset.
import { expect, test } from 'vitest';
import * as core from '../src/index.js';

test('the public runtime exports are exactly these', () => {
  expect(Object.keys(core).sort()).toEqual([
    'CLOCK_SKEW_MS',
    'CoreError',
    'DEFAULT_MAX_EXCEPTION_LIFETIME_MS',
    'DOCKER_HUB',
    'InvalidPolicyError',
    'InvalidReferenceError',
    'applyGrace',
    'checkedVerdict',
    'combineAuthorities',
    'compileException',
    'compilePolicies',
    'compilePolicy',
    'decideAdmission',
    'describeCause',
    'digestPatch',
    'exceptionState',
    'formatAge',
    'graceFor',
    'matchPolicies',
    'matchSubjectOf',
    'mutatingResponse',
    'parseReference',
    'planChecks',
    'policySet',
    'policyVerdict',
    'repositoryOf',
    'semanticEqual',
    'summarizeAdmission',
    'validatingResponse',
    'withDigest',
  ]);
});
