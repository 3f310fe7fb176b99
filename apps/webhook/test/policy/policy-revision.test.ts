// A policy's revision is the key its cached passes are kept under: it changes with whatever changes
// what the policy requires. Signet's annotations do (`signet.dev/index-signatures`) without changing
// the object's generation, so they are part of it; other annotations are not.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parsePolicyYaml } from '../../src/policy/policy-file.js';
import { compileSnapshot } from '../../src/policy/policy-store.js';

const PEM = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .publicKey.export({ format: 'pem', type: 'spki' })
  .toString();

const policy = (annotations: Record<string, string>) => `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: release, uid: u-1, annotations: ${JSON.stringify(annotations)} }
spec:
  images: [{ glob: "registry.example/**" }]
  authorities: [{ key: { data: ${JSON.stringify(PEM)} } }]
`;

async function revision(annotations: Record<string, string>): Promise<string | undefined> {
  const { snapshot } = await compileSnapshot(parsePolicyYaml(policy(annotations), 'signet-system'), {
    namespace: 'signet-system',
  });
  return snapshot?.policySet.policies[0]?.compiled.revision;
}

describe('a policy revision', () => {
  it("changes with signet.dev/index-signatures, and not with other projects' annotations", async () => {
    const plain = await revision({});
    expect(plain).toBeDefined();
    expect(await revision({ 'example.com/owner': 'team-a' })).toBe(plain);
    const platforms = await revision({ 'signet.dev/index-signatures': 'platforms' });
    expect(platforms).not.toBe(plain);
    expect(await revision({ 'signet.dev/index-signatures': 'index-or-platforms' })).not.toBe(platforms);
    expect(await revision({ 'signet.dev/index-signatures': 'platforms', 'example.com/owner': 'b' })).toBe(
      platforms,
    );
  });
});
