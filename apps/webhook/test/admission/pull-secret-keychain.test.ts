// The PullSecretLookup port is served by KubePullSecretLookup against a real API server in the
// e2e suite (e2e/test/webhook-kube.test.ts); here an in-memory lookup stands in for it so that
// which Secrets are read, and how failures are tolerated, can be checked exactly.

import { decideAdmission, matchSubjectOf } from '@signet/core';
import { describe, expect, it } from 'vitest';
import { createRequestFor } from '../../src/admission/create-request.js';
import { admissionCredentials, type PullSecretLookup } from '../../src/admission/pull-secret-keychain.js';
import { createLogger } from '../../src/logger.js';
import { parsePolicyYaml } from '../../src/policy/policy-file.js';
import { compileSnapshot } from '../../src/policy/policy-store.js';
import { LogCapture } from '../helpers.js';

const dockerSecret = (registry: string) => ({
  kind: 'Secret',
  type: 'kubernetes.io/dockerconfigjson',
  metadata: { name: 'x' },
  data: {
    '.dockerconfigjson': Buffer.from(
      JSON.stringify({ auths: { [registry]: { username: 'u', password: 'p' } } }),
    ).toString('base64'),
  },
});

async function checksFor(image: string, extra: Record<string, unknown> = {}) {
  const policies = parsePolicyYaml(
    `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: p }
spec:
  images: [{ glob: "registry.example/**" }]
  authorities:
    - keyless: { identities: [{ issuer: "https://issuer.example", subject: "ci@acme.example" }] }
      source: [{ signaturePullSecrets: [{ name: sig-secret }] }]
`,
    'signet-system',
  );
  const { snapshot } = await compileSnapshot(policies, { namespace: 'signet-system' });
  const object = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'team' },
    spec: { containers: [{ name: 'a', image }], ...extra },
  };
  const request = createRequestFor(object, { namespace: 'team' });
  if (!request || !snapshot) throw new Error('unreachable');
  return { request, checks: snapshot.checksFor(decideAdmission(request), matchSubjectOf(request)) };
}

function lookup(secrets: Record<string, unknown>, accounts: Record<string, string[] | Error> = {}) {
  const reads: string[] = [];
  const port: PullSecretLookup = {
    async secret(namespace, name) {
      reads.push(`secret ${namespace}/${name}`);
      const found = secrets[name];
      if (found instanceof Error) throw found;
      return found as Record<string, unknown> | undefined;
    },
    async serviceAccountPullSecrets(namespace, name) {
      reads.push(`sa ${namespace}/${name}`);
      const found = accounts[name] ?? [];
      if (found instanceof Error) throw found;
      return found;
    },
  };
  return { port, reads };
}

describe('admissionCredentials', () => {
  it("reads the pod's, its ServiceAccount's and the policy's signature pull secrets, in the pod's namespace", async () => {
    const { request, checks } = await checksFor(`registry.example/app@sha256:${'a'.repeat(64)}`, {
      imagePullSecrets: [{ name: 'pod-secret' }],
      serviceAccountName: 'builder',
    });
    const { port, reads } = lookup(
      { 'pod-secret': dockerSecret('registry.example'), 'sa-secret': dockerSecret('other.example') },
      { builder: ['sa-secret'] },
    );
    const keychain = await admissionCredentials(port, request, checks, createLogger({ level: 'silent' }));
    expect(reads.sort()).toEqual([
      'sa team/builder',
      'secret team/pod-secret',
      'secret team/sa-secret',
      'secret team/sig-secret',
    ]);
    expect(keychain).toBeDefined();
  });

  it('skips what it cannot read or use, saying so, as the kubelet does', async () => {
    const { request, checks } = await checksFor(`registry.example/app@sha256:${'a'.repeat(64)}`, {
      imagePullSecrets: [{ name: 'broken' }],
    });
    const logs = new LogCapture();
    const { port } = lookup(
      {
        broken: {
          kind: 'Secret',
          type: 'kubernetes.io/dockerconfigjson',
          data: { '.dockerconfigjson': 'bm90IGpzb24=' },
        },
        'sig-secret': new Error('forbidden'),
      },
      { default: new Error('api down') },
    );
    expect(
      await admissionCredentials(port, request, checks, createLogger({ destination: logs })),
    ).toBeUndefined();
    expect(logs.lines.map((l) => l.msg).sort()).toEqual([
      'cannot read a pull secret',
      'cannot read the ServiceAccount; its pull secrets are not used',
      'ignoring a pull secret',
    ]);
  });

  it('reads nothing without a lookup, a namespace, or anything to verify', async () => {
    const { request, checks } = await checksFor(`elsewhere.example/app@sha256:${'a'.repeat(64)}`);
    const { port, reads } = lookup({});
    const logger = createLogger({ level: 'silent' });
    expect(await admissionCredentials(port, request, checks, logger)).toBeUndefined();
    expect(await admissionCredentials(undefined, request, checks, logger)).toBeUndefined();
    expect(reads).toEqual([]);
  });
});
