// Builds and installs what this package's tests run before the first test starts, not inside a
// test's timeout: both registries, crane, cosign and the forward proxy, moto (STS, ECR) and
// python-tuf (TUF repositories), and policy-controller's own policies and test data.
import { prepareTestPrerequisites } from '@signet/testbed';

export default () =>
  prepareTestPrerequisites('prepare', {
    tools: [
      'crane',
      'cosign',
      'registry',
      'oci-registry',
      'forward-proxy',
      // the private Sigstore (keyless with cosign 3, GitHub-style trust)
      'fulcio',
      'timestamp-authority',
      'rekor-server',
    ],
    python: ['moto', 'tuf'],
    sourceModules: ['policy-controller'],
  });
