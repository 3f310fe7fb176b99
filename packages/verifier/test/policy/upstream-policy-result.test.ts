// The `id` and `digest` fields (and the GitHub workflow extensions) of the document a CUE or Rego
// spec-level policy sees, against policy-controller's own expectation: its
// `pkg/webhook/validator_test.go` (v0.15.1 module) hands its validator a real keyless attestation
// of ghcr.io/distroless/static from 2022 (DSSE envelope, Fulcio certificate and chain) as cosign's
// `.att` layer gives it, and expects a `PolicyAttestation` with a given `ID`, `Digest`, subject,
// issuer, extensions and predicate type. Upstream's test mocks the verification (the fixture's
// Rekor entry is for other envelope bytes), so here the same layer goes through Signet's decoder
// and field computation, and a spec-level result with that signer must read as upstream's.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseClusterImagePolicy } from '@signet/k8s-types';
import { X509Certificate } from '@sigstore/core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LegacyAttestation } from '../../src/artifacts.js';
import { compileAuthorities } from '../../src/policy/compile.js';
import type { AuthorityCheck } from '../../src/policy/results.js';
import { policyResult, requestedPredicateTypes } from '../../src/policy/verify-policy.js';
import { decodeArtifact } from '../../src/sigstore/decode.js';
import { certificateIdentity } from '../../src/sigstore/identity.js';
import { leafCertificate, upstreamFields } from '../../src/sigstore/upstream-fields.js';
import { loadTestbed } from '../support/registry-helpers.js';

/** A Go interpreted string literal's value (the escapes the test file uses). */
function goString(literal: string): string {
  return literal.replace(/\\n/g, '\n').replace(/\\"/g, '"');
}

function match(text: string, pattern: RegExp, what: string): RegExpMatchArray {
  const found = text.match(pattern);
  if (found === null) throw new Error(`upstream's validator_test.go no longer has ${what}`);
  return found;
}

interface Upstream {
  readonly attestation: LegacyAttestation;
  readonly expected: Record<string, string>;
}

/** The `passKeyless` attestation and the `simple, keyless attestation, works` expectation. */
function readUpstream(source: string): Upstream {
  const fixture = source.slice(source.indexOf('passKeyless := func'));
  const [, payload = ''] = match(fixture, /payload := \[\]byte\(`([^`]*)`\)/, 'the passKeyless payload');
  const [, set = ''] = match(
    fixture,
    /set, err := base64\.StdEncoding\.DecodeString\("([^"]+)"\)/,
    'its SET',
  );
  const [, leaf = '', chain = ''] = match(
    fixture,
    /static\.WithCertChain\(\s*\[\]byte\("([^"]+)"\),\s*\[\]byte\("([^"]+)"\),?\s*\)/,
    'its certificate chain',
  );
  const [, body = ''] = match(fixture, /Body:\s+"([^"]+)"/, 'its Rekor body');
  const [, time = ''] = match(fixture, /IntegratedTime:\s+(\d+)/, 'its integrated time');
  const [, index = ''] = match(fixture, /LogIndex:\s+(\d+)/, 'its log index');
  const [, logId = ''] = match(fixture, /LogID:\s+"([0-9a-f]+)"/, 'its log ID');
  const bundle = {
    SignedEntryTimestamp: set,
    Payload: { body, integratedTime: Number(time), logIndex: Number(index), logID: logId },
  };
  const want = source.slice(source.indexOf('name: "simple, keyless attestation, works"'));
  const field = (name: string) =>
    match(want, new RegExp(`${name}:\\s+"([^"]+)"`), `the expected ${name}`)[1] ?? '';
  return {
    attestation: {
      format: 'legacy-attestation',
      source: 'ghcr.io/distroless/static:sha256-a1e82f6a.att',
      envelope: Buffer.from(payload),
      annotations: {
        'dev.cosignproject.cosign/signature': '',
        'dev.sigstore.cosign/certificate': goString(leaf),
        'dev.sigstore.cosign/chain': goString(chain),
        'dev.sigstore.cosign/bundle': JSON.stringify(bundle),
      },
    },
    expected: {
      id: field('ID'),
      subject: field('Subject'),
      issuer: field('Issuer'),
      githubWorkflowTrigger: field('WorkflowTrigger'),
      githubWorkflowSha: field('WorkflowSHA'),
      githubWorkflowName: field('WorkflowName'),
      githubWorkflowRepo: field('WorkflowRepo'),
      githubWorkflowRef: field('WorkflowRef'),
      predicateType: field('PredicateType'),
      digest: field('Digest'),
    },
  };
}

describe("policy-controller's PolicyResult fields (id, digest, GitHub extensions)", () => {
  let upstream: Upstream;

  beforeAll(async () => {
    const module = await (await loadTestbed()).policyControllerModule();
    upstream = readUpstream(await readFile(join(module, 'pkg/webhook/validator_test.go'), 'utf8'));
  });

  it("gives upstream's keyless attestation upstream's id, digest, identity, extensions and predicate type", async () => {
    expect(upstream.expected.id).toMatch(/^[0-9a-f]{64}$/);
    expect(upstream.expected.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const cip = parseClusterImagePolicy({
      apiVersion: 'policy.sigstore.dev/v1beta1',
      kind: 'ClusterImagePolicy',
      metadata: { name: 'distroless' },
      spec: {
        images: [{ glob: '**' }],
        authorities: [
          {
            name: 'authority-0',
            keyless: {
              identities: [{ issuer: upstream.expected.issuer, subject: upstream.expected.subject }],
            },
            attestations: [{ name: 'test-att', predicateType: upstream.expected.predicateType }],
          },
        ],
        policy: { type: 'cel', data: 'true' },
      },
    });
    const compiled = await compileAuthorities(cip);
    const decoded = decodeArtifact(upstream.attestation);
    const leaf = leafCertificate(decoded.bundle);
    if (leaf === undefined) throw new Error('no certificate');
    const identity = certificateIdentity(X509Certificate.parse(Buffer.from(leaf)));
    const check = {
      authority: 'authority-0',
      passed: true,
      signer: undefined,
      static: false,
      counts: { found: 1, verified: 1 },
      signatures: [],
      rejected: [],
      attestations: {
        'test-att': [
          {
            source: decoded.source,
            format: decoded.format,
            signer: { type: 'keyless', issuer: identity.issuer ?? '', subject: identity.subjects[0] ?? '' },
            statement: JSON.parse(decoded.payload.toString('utf8')),
            ...upstreamFields(decoded, true),
          },
        ],
      },
    } as AuthorityCheck;
    const spec = compiled.specPolicy;
    if (spec === undefined) throw new Error('no spec policy');
    expect(policyResult([check], spec, {}, requestedPredicateTypes(compiled))).toEqual({
      authorityMatches: { 'authority-0': { attestations: { 'test-att': [upstream.expected] } } },
    });
  });
});
