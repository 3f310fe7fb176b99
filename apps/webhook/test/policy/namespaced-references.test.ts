// What Signet reads of a team's namespace for its ImagePolicies: exactly the Secrets and ConfigMaps
// they name, in their own namespace, found in the objects as stored (parsed or not).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { referencedInputs, referencedInputsOf } from '../../src/policy/namespaced-references.js';

const example = parseAllDocuments(
  readFileSync(
    new URL('../../../../docs/examples/policies/namespaced/shop-image-policy.yaml', import.meta.url),
    'utf8',
  ),
)
  .map((doc) => doc.toJS() as { kind: string })
  .find((o) => o.kind === 'ImagePolicy');

const policy = (namespace: string | undefined, spec: unknown) => ({
  apiVersion: 'policy.signet.dev/v1alpha1',
  kind: 'ImagePolicy',
  metadata: { name: 'p', ...(namespace === undefined ? {} : { namespace }) },
  spec,
});

describe('the Secrets and ConfigMaps an ImagePolicy references', () => {
  it("reads the documented example's key Secret in its own namespace", () => {
    expect(referencedInputs(example)).toEqual([
      { kind: 'Secret', namespace: 'shop', name: 'shop-cosign-pub' },
    ]);
  });

  it('finds keys, CA certificates, and policies of the spec and of attestations, each once', () => {
    const spec = {
      images: [{ glob: '**' }],
      authorities: [
        { key: { secretRef: { name: 'team-key' } } },
        { key: { secretRef: { name: 'team-key', namespace: 'team-a' } } },
        {
          keyless: { 'ca-cert': { secretRef: { name: 'team-ca' } }, identities: [] },
          attestations: [
            {
              name: 'sbom',
              predicateType: 'cyclonedx',
              policy: { type: 'rego', configMapRef: { name: 'sbom-rego', key: 'p' } },
            },
          ],
        },
      ],
      policy: { type: 'cue', configMapRef: { name: 'spec-cue', key: 'p' } },
    };
    expect(referencedInputsOf([policy('team-a', spec)])).toEqual([
      { kind: 'ConfigMap', namespace: 'team-a', name: 'sbom-rego' },
      { kind: 'ConfigMap', namespace: 'team-a', name: 'spec-cue' },
      { kind: 'Secret', namespace: 'team-a', name: 'team-ca' },
      { kind: 'Secret', namespace: 'team-a', name: 'team-key' },
    ]);
  });

  it("never names another namespace's object, nor one no object can be named, nor a prototype's key", () => {
    // Keys as JSON has them: `__proto__` and `constructor` are own fields, not the prototype's.
    const spec: unknown = JSON.parse(`{"authorities": [
      { "key": { "secretRef": { "name": "signet-key", "namespace": "signet-system" } } },
      { "key": { "secretRef": { "name": "Not_A_Name" } } },
      { "key": { "secretRef": { "name": 42 } } },
      { "key": { "secretRef": "team-key" } },
      { "constructor": { "name": "x" }, "__proto__": { "name": "y" }, "toString": { "secretRef": { "name": "ok" } } }
    ]}`);
    expect(referencedInputs(policy('team-a', spec))).toEqual([
      { kind: 'Secret', namespace: 'team-a', name: 'ok' },
    ]);
  });

  it('reads nothing for an object without a namespace, metadata or spec, and stops at a depth bound', () => {
    expect(
      referencedInputs(policy(undefined, { authorities: [{ key: { secretRef: { name: 'k' } } }] })),
    ).toEqual([]);
    expect(referencedInputs({ spec: {} })).toEqual([]);
    expect(referencedInputs('not an object')).toEqual([]);
    expect(referencedInputs(policy('team-a', undefined))).toEqual([]);
    let deep: unknown = { secretRef: { name: 'deep' } };
    for (let i = 0; i < 20; i++) deep = { nested: deep };
    expect(referencedInputs(policy('team-a', deep))).toEqual([]);
    let shallow: unknown = { secretRef: { name: 'shallow' } };
    for (let i = 0; i < 10; i++) shallow = [shallow];
    expect(referencedInputs(policy('team-a', shallow))).toEqual([
      { kind: 'Secret', namespace: 'team-a', name: 'shallow' },
    ]);
  });
});
