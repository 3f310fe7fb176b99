// Builds and installs what this package's tests run before the first test starts, not inside a
// test's timeout: the registry, crane and cosign, moto (AWS KMS) and python-tuf (the Vault
// stand-in's cryptography), and policy-controller's own KMS policies.
import { prepareTestPrerequisites } from '@signet/testbed';

export default () =>
  prepareTestPrerequisites('prepare', {
    tools: ['crane', 'cosign', 'registry'],
    python: ['moto', 'tuf'],
    sourceModules: ['policy-controller'],
  });
