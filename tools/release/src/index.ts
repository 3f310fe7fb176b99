// @signet/release: what a release of Signet must satisfy, and the pieces its tests use.

export {
  type Consumer,
  type ConsumerOptions,
  createConsumer,
  type PackageManager,
  type RunOutput,
} from './consumer.js';
export { satisfiesEngines } from './engines.js';
export {
  type ExpectedRun,
  printsExpected,
  type ReadmeExample,
  type ReadmeExamples,
  readmeExamples,
} from './readme-examples.js';
export {
  APP_PACKAGE,
  appVersion,
  CHART_DIR,
  type ChangesetsConfig,
  type ChartVersions,
  disagreeingVersions,
  readChangesetsConfig,
  readChartVersions,
  versionSources,
} from './versions.js';
export {
  copyWorkspace,
  type PackageManifest,
  publicPackages,
  readManifest,
  repositoryRoot,
  toolEnv,
  type WorkspacePackage,
  workspacePackages,
} from './workspace.js';
