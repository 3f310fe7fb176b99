// The README's example, verbatim except for this line and the import path of @signet/core.
import { parseAdmissionReview, parseClusterImagePolicy } from '@signet/k8s-types';
import {
  compilePolicies,
  decideAdmission,
  type ImageVerdict,
  matchSubjectOf,
  planChecks,
  policyVerdict,
  summarizeAdmission,
  validatingResponse,
} from '../../src/index.js';

// A cosign public key (`cosign.pub`); core only matches policies, the verifier reads keys.
const RELEASE_KEY_PEM = `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEP/fX8ry2kIoyEAjBR0YvqhrvYxq1
t42I0z+wQCrpmHAX4qEBkgWEl0KK8qWZ6//hyicnu33nPyN6QWZ+80WP0A==
-----END PUBLIC KEY-----`;

// Once per policy change: compile the cluster's ClusterImagePolicies.
const policies = compilePolicies(
  [
    parseClusterImagePolicy({
      apiVersion: 'policy.sigstore.dev/v1beta1',
      kind: 'ClusterImagePolicy',
      metadata: { name: 'release' },
      spec: {
        images: [{ glob: 'registry.example/**' }],
        authorities: [{ name: 'release-key', key: { data: RELEASE_KEY_PEM } }],
      },
    }),
  ],
  { noMatchPolicy: 'deny' },
);

// Per request: decide, then verify only what the decision asks for.
const { request } = parseAdmissionReview({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'a1',
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    // A tag would be denied unverified: a Pod must run the digest that was verified.
    object: {
      kind: 'Pod',
      spec: {
        containers: [
          {
            name: 'app',
            image:
              'registry.example/app@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
          },
        ],
      },
    },
  },
});
const decision = decideAdmission(request); // { action: 'verify', rule: 'create', images: [...], mutations: [...] }
const verdicts = planChecks(decision, policies, matchSubjectOf(request)).map((check): ImageVerdict => {
  if (check.kind === 'settled') return check.verdict; // invalid reference, no matching policy, unpinned tag
  // The verifier's job (@signet/verifier): check each policy's authorities against the registry.
  const failure = {
    kind: 'policy' as const,
    reason: 'no valid signature: 1 found, 0 verified',
    cause: new Error('signature does not match key "release-2026"'),
  };
  const results = check.policies.map((policy) =>
    policyVerdict(policy, [{ authority: 'release-key', passed: false, failure }]),
  );
  return {
    path: check.target.path,
    image: check.target.image,
    outcome: { kind: 'policies', verdicts: results },
  };
});
const response = validatingResponse(summarizeAdmission(decision, verdicts));
console.log(response.allowed, response.status?.message);
