// Builds what this package's tests run before the first test starts, not inside a test's timeout.
import { prepareTestPrerequisites } from '../src/prepare.ts';
import { PRIVATE_SIGSTORE_TOOLS } from '../src/sigstore/private-sigstore.ts';

export default () =>
  prepareTestPrerequisites('prepare', {
    tools: [
      'crane',
      'cosign',
      'registry',
      'oci-registry',
      'forward-proxy',
      // test/private-sigstore.test.ts
      ...PRIVATE_SIGSTORE_TOOLS,
    ],
  });
