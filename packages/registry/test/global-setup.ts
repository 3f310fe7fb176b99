// Builds and installs what this package's tests run before the first test starts, not inside a
// test's timeout: both registries, crane, cosign and the forward proxy, and moto (STS, ECR).
import { prepareTestPrerequisites } from '@signet/testbed';

export default () =>
  prepareTestPrerequisites('prepare', {
    tools: ['crane', 'cosign', 'registry', 'oci-registry', 'forward-proxy'],
    python: ['moto'],
  });
