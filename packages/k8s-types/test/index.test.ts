// Pins the package's runtime surface: a change here is a change of the published API, and
// belongs in a changeset.
import { expect, test } from 'vitest';
import * as types from '../src/index.js';

test('the public runtime exports are exactly these', () => {
  expect(Object.keys(types).sort()).toEqual([
    'ADMISSION_API_VERSION',
    'ALLOW_UNPINNED_TAGS_ANNOTATION',
    'AdmissionReviewError',
    'CLUSTER_IMAGE_POLICY_VERSIONS',
    'FieldError',
    'IMAGE_FIELDS',
    'INCLUDE_NAMESPACE_LABEL',
    'ObjectShapeError',
    'POLICY_CONTROLLER_CONFIG_NAME',
    'POLICY_GROUP',
    'PolicyParseError',
    'REGISTERED_OPERATIONS',
    'REGISTERED_SUBRESOURCES',
    'WORKLOADS',
    'WORKLOAD_LIST',
    'admissionReviewFor',
    'controllerOf',
    'imagesOf',
    'isObject',
    'jsonNestingExceeds',
    'parseAdmissionReview',
    'parseAdmissionReviewJson',
    'parseClusterImagePolicy',
    'parsePolicyControllerConfig',
    'parseTrustRoot',
    'pathString',
    'podSpecOf',
    'podTemplateOf',
    'policyModeOf',
    'registeredRules',
    'scaleOf',
    'valueAt',
    'workloadForKind',
    'workloadForResource',
  ]);
});
