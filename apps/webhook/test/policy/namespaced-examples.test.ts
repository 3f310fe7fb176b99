// The namespaced examples of docs/examples/policies/namespaced load, compile and behave as
// docs/namespaced-policies.md says. The e2e tests apply them to a real API server with the CRDs.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseReference } from '@signet/core';
import { describe, expect, it } from 'vitest';
import { loadPolicyFile, requireUsablePolicyFiles } from '../../src/policy/policy-file.js';
import { mergePolicyObjects } from '../../src/policy/policy-objects.js';
import { compileSnapshot } from '../../src/policy/policy-store.js';

const dir = fileURLToPath(new URL('../../../../docs/examples/policies/namespaced/', import.meta.url));
const CHECKOUT =
  'ghcr.io/acme-shop/checkout@sha256:6c3c624b58dbbcd3c0dd82b4c53f04194d1247c6eebdaab7c610cf7d66709b3b';
const pod = (namespace: string) => ({ group: '', version: 'v1', resource: 'pods', labels: {}, namespace });

describe('docs/examples/policies/namespaced', () => {
  it('every file loads and compiles: the ImagePolicy with its Secret, the exception', async () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
    expect(files.sort()).toEqual(['checkout-hotfix-exception.yaml', 'shop-image-policy.yaml']);
    const objects = mergePolicyObjects(
      await Promise.all(files.map((f) => loadPolicyFile(`${dir}${f}`, 'default'))),
    );
    expect(objects.problems).toEqual([]);
    requireUsablePolicyFiles(objects);
    const { snapshot, problems } = await compileSnapshot(
      { ...objects, config: { ...objects.config, noMatchPolicy: 'allow' } },
      { namespace: 'signet-system' },
    );
    expect(problems).toEqual([]);
    const [policy] = snapshot?.policySet.namespaced.get('shop') ?? [];
    expect(policy?.name).toBe('shop/shop-release');
    expect(policy?.compiled.authorities.map((a) => [a.name, a.type !== 'static' && a.state.kind])).toEqual([
      ['release-workflow', 'ready'],
      ['team-key', 'ready'],
    ]);

    // The hotfix runs in shop without the team's signature until the exception expires.
    const checkout = parseReference(CHECKOUT);
    expect(snapshot?.match(checkout, pod('shop'), Date.parse('2026-07-01T12:00:00Z'))).toMatchObject({
      kind: 'exempted',
      exemptions: [{ policy: 'shop/shop-release', exception: 'shop/checkout-hotfix-inc-4711' }],
    });
    expect(snapshot?.match(checkout, pod('shop'), Date.parse('2026-07-03T17:00:00Z'))).toMatchObject({
      kind: 'matched',
      policies: [{ name: 'shop/shop-release' }],
      exemptions: [],
    });
    // Another build of the same service is not covered.
    const other = parseReference(`ghcr.io/acme-shop/checkout@sha256:${'0'.repeat(64)}`);
    expect(snapshot?.match(other, pod('shop'), Date.parse('2026-07-01T12:00:00Z'))).toMatchObject({
      kind: 'matched',
    });
  });
});
