#!/usr/bin/env node
// Builds (or loads from the cache) the kind node image into the engine at DOCKER_HOST:
//   pnpm --filter @signet/testbed kind-node-image
import { Docker } from '../images/docker.js';
import { ensureKindNodeImage } from '../images/kind-node-image.js';

ensureKindNodeImage({ docker: new Docker(), onProgress: (line) => console.log(line) })
  .then((image) => console.log(`${image.reference} (${image.source}, ${image.seconds}s)`))
  .catch((error: unknown) => {
    console.error(`kind-node-image: FAILED: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
