// The README's example, verbatim except for this line and the import path of @signet/registry.
// inspect.ts — node inspect.ts REGISTRY REPOSITORY TAG [insecure-registry-host:port]
import { ArtifactDiscovery, RegistryClient } from '../../src/index.js';

const [registry = '', repository = '', tag = 'latest', insecure] = process.argv.slice(2);

// One client per process: connections and tokens are reused. Pass `credentials` (a Keychain of
// pull secrets) or `credentialProviders` (ECR, GCP, ACR) for private registries.
const client = new RegistryClient(insecure ? { insecureHosts: [insecure] } : {});
// Every call has a deadline and a signal; a failure is a RegistryError with a `code`.
const call = { signal: AbortSignal.timeout(10_000), deadline: Date.now() + 10_000 };

const digest = await client.resolveDigest({ registry, repository, tag }, call);
const { manifest } = await client.getManifest({ registry, repository }, digest, call);
console.log(`${repository}:${tag} is ${digest}, an image ${manifest.kind}`);

// What is attached to it: OCI 1.1 referrers (the API, or the fallback tag), and cosign's `.sig` tag.
const referrers = await client.listReferrers({ registry, repository }, digest, call);
console.log(`${referrers.descriptors.length} referrer(s), read through the ${referrers.via}`);
const signatures = await new ArtifactDiscovery(client).discover(
  {
    image: { registry, repository, digest },
    query: {
      kind: 'digest-tag',
      suffix: 'sig',
      mediaType: 'application/vnd.dev.cosign.simplesigning.v1+json',
    },
  },
  call,
);
console.log(`${signatures.artifacts.length} signature layer(s) under ${digest.replace(':', '-')}.sig`);
