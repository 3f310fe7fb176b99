// Builds what this package's tests run before the first test starts, not inside a test's timeout.
import { prepareTestPrerequisites } from '../src/prepare.ts';

export default () =>
  prepareTestPrerequisites('prepare', {
    tools: [
      'crane',
      'cosign',
      'registry',
      'oci-registry',
      'forward-proxy',
      // the private Sigstore of test/private-sigstore.test.ts
      'fulcio',
      'timestamp-authority',
      'rekor-server',
    ],
  });
