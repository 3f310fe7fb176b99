// The README's example, verbatim except for this line and the import path of @signet/verifier.
// verify.ts — node verify.ts IMAGE@DIGEST cosign.pub [insecure-registry-host:port]
import { readFile } from 'node:fs/promises';
import { parseReference } from '@signet/core';
import { parseClusterImagePolicy } from '@signet/k8s-types';
import { RegistryClient } from '@signet/registry';
import { compileAuthorities, ImageVerifier, VerificationCache } from '../../src/index.js';

const [image = '', keyFile = '', insecure] = process.argv.slice(2);

// Once per policy change: parse and compile (keys, trust roots and CEL programs are read here).
const cip = parseClusterImagePolicy({
  apiVersion: 'policy.sigstore.dev/v1beta1',
  kind: 'ClusterImagePolicy',
  metadata: { name: 'release' },
  spec: {
    images: [{ glob: '**' }],
    authorities: [{ name: 'release-key', key: { data: await readFile(keyFile, 'utf8') } }],
  },
});
// Its passes are cached under its revision, new with each compile.
const policy = await compileAuthorities(cip);

// Once per process: one registry client (connections, tokens) and one cache of passes.
const verifier = new ImageVerifier({
  registry: new RegistryClient(insecure ? { insecureHosts: [insecure] } : {}),
  cache: new VerificationCache({ ttlMs: 5 * 60_000 }),
});

// Per image: never throws; a failure is a result whose kind is 'policy' or 'infrastructure'.
const result = await verifier.verifyImage(
  { reference: parseReference(image), policies: [policy] },
  { signal: AbortSignal.timeout(10_000), deadline: Date.now() + 10_000 },
);
for (const check of result.checks) {
  console.log(
    check.policy,
    check.passed ? `passed (authority ${check.authority})` : `failed: ${check.failure.reason}`,
  );
}
