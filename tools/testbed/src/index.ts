// @signet/testbed: real external programs for Signet's tests, built from pinned Go modules and run
// on loopback.
export {
  type AttestOptions,
  Cosign,
  type CosignKeyPair,
  createCosign,
  type KeylessSigner,
  type SignatureFormat,
  type SignOptions,
} from './cosign.js';
export {
  type DockerEngine,
  dockerProblem,
  type StartDockerOptions,
  startDockerEngine,
  stopDockerEngine,
} from './docker-engine.js';
export { TestbedError, type TestbedErrorCode, tailLines } from './errors.js';
export { type RunOptions, type RunResult, runCommand } from './exec.js';
export {
  type BuildOptions,
  binaryPath,
  type InstallLocation,
  installGoBinaries,
  type ToolProgress,
  type ToolProgressKind,
  type ToolSpec,
} from './go-build.js';
export { writeHtpasswd } from './htpasswd.js';
export { type IndexPushOptions, type PushedIndex, pushImageIndex } from './image-index.js';
export {
  buildComponentImage,
  type ComponentImage,
  importDirectory,
} from './images/component-images.js';
export { buildDebianRootfs, hostAptSources, hostSuite, type RootfsOptions } from './images/debian-rootfs.js';
export { Docker } from './images/docker.js';
export {
  ensureKindNodeImage,
  KIND_IMAGE_NAMES,
  type KindNodeImage,
  type KindNodeImageOptions,
  kindModuleDir,
} from './images/kind-node-image.js';
export { type RegistryContainer, startRegistryContainer } from './images/registry-container.js';
export { startVault, type Vault } from './kms.js';
export { MOTO_VERSION, type Moto, type StartMotoOptions, startMoto } from './moto.js';
export {
  ensureNodeBinary,
  NODE_LTS_VERSIONS,
  type NodeBinary,
  type NodeLtsMajor,
} from './node-binaries.js';
export {
  type PrepareOptions,
  prepareTestPrerequisites,
  type TestPrerequisites,
} from './prepare.js';
export {
  createRunDir,
  type ExitInfo,
  freePort,
  httpStatus,
  ManagedProcess,
  ProcessGroup,
  type Readiness,
  type StartOptions,
  tcpOpen,
} from './process.js';
export { type HttpProxy, startHttpProxy } from './proxy.js';
export {
  type EnsurePythonOptions,
  ensurePythonPackage,
  installedVersion,
  PYTHON_PACKAGES,
  type PythonInstall,
  type PythonPackageName,
  type PythonPackageSpec,
  pythonPackageDir,
} from './python.js';
export { pushReferrer, type ReferrerLayer, type ReferrerOptions } from './referrer.js';
export {
  craneEnv,
  type PushOptions,
  pushRandomImage,
  type Registry,
  type StartRegistryOptions,
  startRegistry,
} from './registry.js';
export {
  DEFAULT_BUSYBOX,
  pushRunnableImage,
  RUNNABLE_IMAGE_ENTRYPOINT,
  type RunnablePushOptions,
} from './runnable-image.js';
export { type Fulcio, type IssuerType, type StartFulcioOptions, startFulcio } from './sigstore/fulcio.js';
export {
  type MintOptions,
  type OidcIssuer,
  startOidcIssuer,
  type WorkflowRun,
  workflowClaims,
} from './sigstore/oidc-issuer.js';
export {
  PRIVATE_SIGSTORE_TOOLS,
  type PrivateSigstore,
  type SigstoreFiles,
  type StartPrivateSigstoreOptions,
  startPrivateSigstore,
} from './sigstore/private-sigstore.js';
export { type Rekor, type StartRekorOptions, startRekor } from './sigstore/rekor.js';
export {
  type StartTimestampAuthorityOptions,
  startTimestampAuthority,
  type TimestampAuthority,
} from './sigstore/timestamp-authority.js';
export { type TarEntry, tarArchive } from './tar.js';
export {
  createPrivateCa,
  mintServerCertificate,
  type PrivateCa,
  type ServerCertificate,
} from './tls.js';
export {
  cacheRoot,
  DEFAULT_TOOL_NAMES,
  type EnsureToolsOptions,
  ensureTools,
  GO_MODULES_DIR,
  isToolName,
  KIND_TOOL_NAMES,
  TOOL_NAMES,
  TOOL_TABLE,
  type ToolName,
  toolPath,
  toolSpec,
} from './tools.js';
export { TufMirror, TufRepository } from './tuf-repository.js';
export {
  POLICY_CONTROLLER_MODULE,
  POLICY_CONTROLLER_VERSION,
  policyControllerModule,
  SOURCE_MODULES,
  type SourceModuleName,
  sourceModule,
} from './upstream.js';
export {
  type NpmRegistry,
  type Packument,
  type StartNpmRegistryOptions,
  startNpmRegistry,
} from './verdaccio.js';
