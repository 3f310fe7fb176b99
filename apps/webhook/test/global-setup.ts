// Builds what this package's tests run before the first test starts, not inside a test's timeout:
// the registry, crane and cosign, helm 3 and 4 and promtool for the chart, and policy-controller's
// own policies.
import { prepareTestPrerequisites } from '@signet/testbed';

export default () =>
  prepareTestPrerequisites('prepare', {
    tools: ['crane', 'cosign', 'registry', 'helm', 'helm4', 'promtool'],
    sourceModules: ['policy-controller'],
  });
