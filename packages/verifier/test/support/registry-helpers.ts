// The registry package's test programs, used here as they are there: an in-memory OCI registry on
// loopback, the HTTP server helpers, the loader of @signet/testbed (real registries, cosign) and
// the ECR stand-in (moto and a registry with Basic auth). One place reaches into that package.
export {
  type EcrRegistryBed,
  startEcrRegistry,
} from '../../../registry/test/helpers/ecr-registry.js';
export { MemoryRegistry, sha256 } from '../../../registry/test/helpers/memory-registry.js';
export { callWithin, startServer, type TestServer } from '../../../registry/test/helpers/server.js';
export { ensureTestTools, loadTestbed, type Testbed } from '../../../registry/test/helpers/testbed.js';
