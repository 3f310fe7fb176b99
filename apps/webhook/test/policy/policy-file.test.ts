import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadPolicyFile, parsePolicyYaml } from '../../src/policy/policy-file.js';

const examples = fileURLToPath(new URL('../../../../docs/examples/policies/', import.meta.url));

describe('--policy-file loading', () => {
  it('loads every example policy in docs/examples unchanged', async () => {
    const files = readdirSync(examples).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const file of files) {
      const loaded = await loadPolicyFile(`${examples}${file}`, 'signet-system');
      expect(loaded.problems, file).toEqual([]);
      expect(loaded.policies.length, file).toBeGreaterThan(0);
    }
    const root = await loadPolicyFile(`${examples}private-trust-root.yaml`, 'signet-system');
    expect(root.trustRoots.map((t) => t.metadata.name)).toEqual(['private-sigstore']);
  });

  it('reads the config ConfigMap first, Secrets, Lists, and ignores other kinds', () => {
    const loaded = parsePolicyYaml(
      `
apiVersion: v1
kind: List
items:
  - apiVersion: policy.sigstore.dev/v1beta1
    kind: ClusterImagePolicy
    metadata: { name: empty }
    spec: { images: [{ glob: "**" }] }
  - apiVersion: v1
    kind: Secret
    metadata: { name: cosign-pub }
    data: { cosign.pub: ${Buffer.from('PEM').toString('base64')} }
    stringData: { extra: text }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: config-policy-controller, namespace: cosign-system }
data: { no-match-policy: allow, fail-on-empty-authorities: "false" }
---
apiVersion: v1
kind: Service
metadata: { name: ignored }
`,
      'signet-system',
    );
    expect(loaded.problems).toEqual([]);
    expect(loaded.config).toEqual({
      noMatchPolicy: 'allow',
      failOnEmptyAuthorities: false,
      enableOCI11: false,
    });
    expect(loaded.policies.map((p) => p.metadata.name)).toEqual(['empty']);
    expect(loaded.secrets).toEqual([
      {
        namespace: 'signet-system',
        name: 'cosign-pub',
        type: undefined,
        data: { 'cosign.pub': Buffer.from('PEM'), extra: Buffer.from('text') },
      },
    ]);
  });

  it('reports a bad object by name and field, and keeps the others', () => {
    const loaded = parsePolicyYaml(
      `
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: broken }
spec:
  images: [{ glob: "**" }]
  authorities: [{ key: { data: x, kms: y } }]
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: fine }
spec:
  images: [{ glob: "**" }]
  authorities: [{ static: { action: pass } }]
---
- not an object
---
apiVersion: v1
kind: ConfigMap
metadata: { name: config-policy-controller }
data: { no-match-policy: maybe }
---
apiVersion: v1
kind: Secret
metadata: { namespace: x }
`,
      'ns',
    );
    expect(loaded.policies.map((p) => p.metadata.name)).toEqual(['fine']);
    expect(loaded.config.noMatchPolicy).toBe('deny');
    expect(loaded.problems.map((p) => `${p.object}: ${p.message}`)).toEqual([
      'ConfigMap/config-policy-controller: data.no-match-policy: must be one of deny, warn, allow, got "maybe" (in ConfigMap/config-policy-controller)',
      'ClusterImagePolicy/broken: spec.authorities[0].key: exactly one of data, secretRef or kms is required, got data, kms (in ClusterImagePolicy/broken)',
      'document 3: <root>: must be a Kubernetes object',
      'document 5: metadata.name: required string (in a Secret)',
    ]);
  });

  it('names the document of a YAML syntax error', () => {
    expect(() => parsePolicyYaml('a: 1\n---\nb: [unclosed\n', 'ns', 'policies.yaml')).toThrow(
      /^policies.yaml: document 2: /,
    );
  });
});
