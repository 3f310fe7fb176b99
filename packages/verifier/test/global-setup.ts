// Builds and installs what this package's tests run before the first test starts, not inside a
// test's timeout: both registries, crane, cosign and the forward proxy, moto (STS, ECR) and
// python-tuf (TUF repositories), and policy-controller's own policies and test data.
import { PRIVATE_SIGSTORE_TOOLS, prepareTestPrerequisites } from '@signet/testbed';

export default () =>
  prepareTestPrerequisites('prepare', {
    tools: [
      'crane',
      'cosign',
      'registry',
      'oci-registry',
      'forward-proxy',
      // keyless with cosign 3, GitHub-style trust
      ...PRIVATE_SIGSTORE_TOOLS,
    ],
    python: ['moto', 'tuf'],
    sourceModules: ['policy-controller'],
  });
