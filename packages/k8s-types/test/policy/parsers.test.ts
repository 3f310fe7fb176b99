import { describe, expect, it } from 'vitest';
import {
  PolicyParseError,
  parseClusterImagePolicy,
  parsePolicyControllerConfig,
  parseTrustRoot,
} from '../../src/index.js';

const PEM = '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE...\n-----END PUBLIC KEY-----\n';

/** Every field of the upstream ClusterImagePolicy spec, as policy YAML written for policy-controller has them. */
const fullPolicy = {
  apiVersion: 'policy.sigstore.dev/v1beta1',
  kind: 'ClusterImagePolicy',
  metadata: { name: 'release', uid: 'u-1', generation: 3, resourceVersion: '77', labels: { team: 'a' } },
  spec: {
    images: [{ glob: 'registry.example/team/**' }, { glob: '*' }],
    mode: 'warn',
    match: [
      { group: 'apps', version: 'v1', resource: 'deployments', selector: { matchLabels: { tier: 'prod' } } },
      {
        resource: 'pods',
        version: 'v1',
        selector: {
          matchExpressions: [
            { key: 'env', operator: 'In', values: ['prod', 'stage'] },
            { key: 'x', operator: 'Exists' },
          ],
        },
      },
    ],
    policy: {
      type: 'cue',
      data: 'authorityMatches: {"keyless": {signatures: [{subject: "x"}]}}',
      includeSpec: true,
      includeObjectMeta: true,
      includeTypeMeta: false,
      fetchConfigFile: true,
    },
    authorities: [
      {
        name: 'release-key',
        key: { data: PEM, hashAlgorithm: 'sha512' },
        source: [
          { oci: 'registry.example/signatures', signaturePullSecrets: [{ name: 'pull' }], tagPrefix: 'v1-' },
        ],
        ctlog: { url: 'https://rekor.example', trustRootRef: 'private' },
        rfc3161timestamp: { trustRootRef: 'private' },
        signatureFormat: 'bundle',
        attestations: [
          {
            name: 'sbom',
            predicateType: 'https://spdx.dev/Document',
            policy: { type: 'cel', data: 'predicate.spdxVersion == "SPDX-2.3"' },
          },
          {
            name: 'vuln',
            predicateType: 'vuln',
            policy: {
              type: 'rego',
              remote: { url: 'https://policies.example/vuln.rego', sha256sum: 'ab'.repeat(32) },
              configMapRef: { name: 'policies', namespace: 'cosign-system', key: 'vuln' },
            },
          },
        ],
      },
      { key: { secretRef: { name: 'cosign-pub', namespace: 'cosign-system' } } },
      {
        key: { kms: 'awskms:///arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab' },
      },
      {
        name: 'keyless',
        keyless: {
          identities: [
            {
              issuer: 'https://token.actions.githubusercontent.com',
              subjectRegExp: '^https://github.com/acme/.*$',
            },
            { issuerRegExp: '.*', subject: 'dev@acme.example' },
          ],
          'ca-cert': { data: PEM },
          trustRootRef: 'private',
          insecureIgnoreSCT: true,
        },
      },
      { name: 'allow-all', static: { action: 'pass' } },
      { static: { action: 'fail', message: 'frozen' } },
    ],
  },
  status: { conditions: [] },
};

function errorOf(body: unknown, options?: { failOnEmptyAuthorities?: boolean }): PolicyParseError {
  try {
    parseClusterImagePolicy(body, options);
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyParseError);
    return error as PolicyParseError;
  }
  throw new Error('expected a PolicyParseError');
}

/** `fullPolicy` with one spec field replaced. */
function withSpec(patch: Record<string, unknown>): unknown {
  return { ...fullPolicy, spec: { ...fullPolicy.spec, ...patch } };
}

function withAuthority(authority: unknown): unknown {
  return withSpec({ authorities: [authority] });
}

describe('parseClusterImagePolicy', () => {
  it('keeps every upstream field of v1beta1 under its upstream name', () => {
    const parsed = parseClusterImagePolicy(fullPolicy);
    const { status: _status, ...expected } = fullPolicy;
    // the only normalisation: lists that were absent stay absent, values are copied as typed data
    expect(parsed).toEqual({
      ...expected,
      spec: {
        ...expected.spec,
        authorities: expected.spec.authorities,
      },
    });
    expect(parsed.spec.authorities[3]?.keyless?.['ca-cert']?.data).toBe(PEM);
  });

  it('reads v1alpha1 with the same shape', () => {
    const parsed = parseClusterImagePolicy({ ...fullPolicy, apiVersion: 'policy.sigstore.dev/v1alpha1' });
    expect(parsed.apiVersion).toBe('policy.sigstore.dev/v1alpha1');
    expect(parsed.spec.images).toHaveLength(2);
  });

  it('parses minimal policies and leaves unknown policy types to the verifier', () => {
    const parsed = parseClusterImagePolicy({
      apiVersion: 'policy.sigstore.dev/v1beta1',
      kind: 'ClusterImagePolicy',
      metadata: { name: 'p' },
      spec: {
        images: [{ glob: '**' }],
        authorities: [
          {
            key: { data: PEM },
            attestations: [{ name: 'a', predicateType: 'x', policy: { type: 'mystery' } }],
          },
        ],
        mode: '',
      },
    });
    expect(parsed.spec).toEqual({
      images: [{ glob: '**' }],
      authorities: [
        {
          key: { data: PEM },
          attestations: [{ name: 'a', predicateType: 'x', policy: { type: 'mystery' } }],
        },
      ],
    });
  });

  it('allows empty authorities only when fail-on-empty-authorities is off', () => {
    const body = withSpec({ authorities: [] });
    expect(errorOf(body).message).toBe(
      'spec.authorities: at least one authority is required (fail-on-empty-authorities is on) (in ClusterImagePolicy/release)',
    );
    expect(parseClusterImagePolicy(body, { failOnEmptyAuthorities: false }).spec.authorities).toEqual([]);
  });

  it.each([
    [null, '<root>: must be an object, got null'],
    [
      { ...fullPolicy, apiVersion: 'policy.sigstore.dev/v1' },
      'apiVersion: must be one of policy.sigstore.dev/v1beta1, policy.sigstore.dev/v1alpha1, got "policy.sigstore.dev/v1" (in ClusterImagePolicy/release)',
    ],
    [
      { ...fullPolicy, apiVersion: undefined },
      'apiVersion: must be one of policy.sigstore.dev/v1beta1, policy.sigstore.dev/v1alpha1, got null (in ClusterImagePolicy/release)',
    ],
    [
      { ...fullPolicy, kind: 'ImagePolicy' },
      'kind: must be "ClusterImagePolicy", got "ImagePolicy" (in ClusterImagePolicy/release)',
    ],
    [
      { ...fullPolicy, kind: undefined },
      'kind: must be "ClusterImagePolicy", got null (in ClusterImagePolicy/release)',
    ],
    [{ ...fullPolicy, metadata: undefined }, 'metadata: required object'],
    [{ ...fullPolicy, metadata: { name: '' } }, 'metadata.name: must not be empty (in ClusterImagePolicy/)'],
    [
      { ...fullPolicy, metadata: { name: 'p', generation: 'one' } },
      'metadata.generation: must be an integer, got string (in ClusterImagePolicy/p)',
    ],
    [
      { ...fullPolicy, metadata: { name: 'p', labels: { a: 1 } } },
      'metadata.labels.a: must be a string, got number (in ClusterImagePolicy/p)',
    ],
    [{ ...fullPolicy, spec: null }, 'spec: required object (in ClusterImagePolicy/release)'],
    [
      withSpec({ images: [] }),
      'spec.images: at least one image glob is required (in ClusterImagePolicy/release)',
    ],
    [
      withSpec({ images: [{ glob: '' }] }),
      'spec.images[0].glob: must not be empty (in ClusterImagePolicy/release)',
    ],
    [
      withSpec({ images: [{ regex: '.*' }] }),
      'spec.images[0].glob: required string (in ClusterImagePolicy/release)',
    ],
    [
      withSpec({ mode: 'audit' }),
      'spec.mode: must be one of enforce, warn, got "audit" (in ClusterImagePolicy/release)',
    ],
    [
      withSpec({ match: [{ selector: { matchExpressions: [{ key: 'a', operator: 'Gt' }] } }] }),
      'spec.match[0].selector.matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist, got "Gt" (in ClusterImagePolicy/release)',
    ],
    [
      withSpec({ policy: { data: 'x' } }),
      'spec.policy.type: required string (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({}),
      'spec.authorities[0]: exactly one of key, keyless or static is required, got none (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ key: { data: PEM }, static: { action: 'pass' } }),
      'spec.authorities[0]: exactly one of key, keyless or static is required, got key, static (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ key: {} }),
      'spec.authorities[0].key: exactly one of data, secretRef or kms is required, got none (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ key: { data: PEM, kms: 'x' } }),
      'spec.authorities[0].key: exactly one of data, secretRef or kms is required, got data, kms (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ key: { secretRef: { namespace: 'x' } } }),
      'spec.authorities[0].key.secretRef.name: required string (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ key: { data: PEM, hashAlgorithm: 'md5' } }),
      'spec.authorities[0].key.hashAlgorithm: must be one of sha224, sha256, sha384, sha512, got "md5" (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ keyless: { identities: [] } }),
      'spec.authorities[0].keyless.identities: at least one identity is required (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ keyless: { identities: [{ subject: 'a' }] } }),
      'spec.authorities[0].keyless.identities[0]: one of issuer or issuerRegExp is required (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ keyless: { identities: [{ issuer: 'a' }] } }),
      'spec.authorities[0].keyless.identities[0]: one of subject or subjectRegExp is required (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ keyless: { identities: [{ issuer: 'a', issuerRegExp: 'b', subject: 'c' }] } }),
      'spec.authorities[0].keyless.identities[0]: issuer and issuerRegExp are exclusive (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ keyless: { identities: [{ issuer: 'a', subject: 'c', subjectRegExp: 'd' }] } }),
      'spec.authorities[0].keyless.identities[0]: subject and subjectRegExp are exclusive (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ keyless: { identities: [{ issuer: 'a', subject: 'b' }], insecureIgnoreSCT: 'yes' } }),
      'spec.authorities[0].keyless.insecureIgnoreSCT: must be a boolean, got string (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ static: {} }),
      'spec.authorities[0].static.action: required: pass or fail (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ static: { action: 'allow' } }),
      'spec.authorities[0].static.action: must be one of pass, fail, got "allow" (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ static: { action: 'pass' }, signatureFormat: 'dsse' }),
      'spec.authorities[0].signatureFormat: must be one of legacy, bundle, got "dsse" (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ key: { data: PEM }, source: [{ signaturePullSecrets: [{}] }] }),
      'spec.authorities[0].source[0].signaturePullSecrets[0].name: required string (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ key: { data: PEM }, attestations: [{ name: 'a', predicateType: '' }] }),
      'spec.authorities[0].attestations[0].predicateType: must not be empty (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ key: { data: PEM }, attestations: [{ predicateType: 'x' }] }),
      'spec.authorities[0].attestations[0].name: required string (in ClusterImagePolicy/release)',
    ],
    [
      withAuthority({ key: { data: PEM }, ctlog: 'x' }),
      'spec.authorities[0].ctlog: must be an object, got string (in ClusterImagePolicy/release)',
    ],
  ])('rejects %# with the field path', (body, message) => {
    const error = errorOf(body);
    expect(error.message).toBe(message);
    expect(error.code).toBe('INVALID_POLICY');
  });

  // policy-controller's apply-time validation rules, each refused with its field path.
  it.each([
    [
      'more than one source',
      { key: { data: PEM }, source: [{ oci: 'a.example/s' }, { oci: 'b.example/s' }] },
      'spec.authorities[0].source',
      /only a single source is supported/,
    ],
    [
      'static with attestations',
      { static: { action: 'pass' }, attestations: [{ name: 'a', predicateType: 'vuln' }] },
      'spec.authorities[0].attestations',
      /cannot be combined with static/,
    ],
    [
      'static with a source',
      { static: { action: 'pass' }, source: [{ oci: 'a.example/s' }] },
      'spec.authorities[0].source',
      /static/,
    ],
    [
      'static with ctlog',
      { static: { action: 'fail' }, ctlog: { url: 'https://rekor.example' } },
      'spec.authorities[0].ctlog',
      /static/,
    ],
    [
      'static with rfc3161timestamp',
      { static: { action: 'fail' }, rfc3161timestamp: { trustRootRef: 'x' } },
      'spec.authorities[0].rfc3161timestamp',
      /static/,
    ],
    [
      'keyless url with ca-cert',
      {
        keyless: {
          url: 'https://fulcio.example',
          'ca-cert': { data: PEM },
          identities: [{ issuer: 'i', subject: 's' }],
        },
      },
      'spec.authorities[0].keyless',
      /url and ca-cert are exclusive/,
    ],
    [
      'includeSpec on an attestation policy',
      {
        key: { data: PEM },
        attestations: [
          { name: 'a', predicateType: 'vuln', policy: { type: 'cel', data: 'true', includeSpec: true } },
        ],
      },
      'spec.authorities[0].attestations[0].policy.includeSpec',
      /only allowed in spec.policy/,
    ],
    [
      'a KMS of no known provider',
      { key: { kms: 'vault://key' } },
      'spec.authorities[0].key.kms',
      /must start with one of/,
    ],
    [
      'an AWS key by ID rather than ARN',
      { key: { kms: 'awskms:///1234abcd-12ab-34cd-56ef-1234567890ab' } },
      'spec.authorities[0].key.kms',
      /key or alias ARN/,
    ],
    [
      'an AWS endpoint without a port',
      { key: { kms: 'awskms://localhost/arn:aws:kms:us-east-2:111122223333:alias/x' } },
      'spec.authorities[0].key.kms',
      /malformed endpoint/,
    ],
  ])('refuses %s', (_, authority, path, problem) => {
    const error = errorOf(withAuthority(authority));
    expect(error.path).toBe(path);
    expect(error.message).toMatch(problem);
  });

  it('refuses an unknown match resource and a selector without a resource', () => {
    const unknown = errorOf(withSpec({ match: [{ resource: 'configmaps' }] }));
    expect(unknown.path).toBe('spec.match[0].resource');
    expect(unknown.message).toMatch(/unsupported resource "configmaps"; one of .*pods/);
    const bare = errorOf(withSpec({ match: [{ selector: { matchLabels: { a: 'b' } } }] }));
    expect(bare.path).toBe('spec.match[0].selector');
  });

  it('accepts every KMS form policy-controller accepts', () => {
    for (const kms of [
      'awskms:///arn:aws:kms:us-east-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
      'awskms://localhost:4566/arn:aws:kms:us-east-2:111122223333:alias/ExampleAlias',
      'gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/k/cryptoKeyVersions/1',
      'azurekms://vault.vault.azure.net/key',
      'hashivault://key',
    ]) {
      expect(parseClusterImagePolicy(withAuthority({ key: { kms } })).spec.authorities[0]?.key?.kms).toBe(
        kms,
      );
    }
  });

  it('names the object on errors', () => {
    expect(errorOf(withSpec({ mode: 'x' })).object).toBe('ClusterImagePolicy/release');
    expect(errorOf({ kind: 'x' }).object).toBeUndefined();
  });
});

const trustRoot = (spec: unknown) => ({
  apiVersion: 'policy.sigstore.dev/v1alpha1',
  kind: 'TrustRoot',
  metadata: { name: 'private' },
  spec,
});

describe('parseTrustRoot', () => {
  it('reads the sigstoreKeys form', () => {
    const spec = {
      sigstoreKeys: {
        certificateAuthorities: [
          {
            subject: { organization: 'acme', commonName: 'fulcio' },
            uri: 'https://fulcio.example',
            certChain: 'LS0t',
          },
        ],
        tLogs: [{ baseURL: 'https://rekor.example', hashAlgorithm: 'sha-256', publicKey: 'LS0t' }],
        ctLogs: [{ baseURL: 'https://ctfe.example', hashAlgorithm: 'sha-256', publicKey: 'LS0t' }],
        timestampAuthorities: [
          {
            subject: { organization: 'acme', commonName: 'tsa' },
            uri: 'https://tsa.example',
            certChain: 'LS0t',
          },
        ],
      },
    };
    expect(parseTrustRoot(trustRoot(spec)).spec).toEqual(spec);
  });

  it('reads the remote and repository forms', () => {
    const remote = {
      root: 'eyJ9',
      mirror: 'https://tuf.example',
      targets: 'targets',
      trustedRootTarget: 'trusted_root.json',
    };
    expect(parseTrustRoot(trustRoot({ remote })).spec).toEqual({ remote });
    const repository = { root: 'eyJ9', mirrorFS: 'H4sI', targets: 'targets' };
    expect(parseTrustRoot(trustRoot({ repository })).spec).toEqual({ repository });
  });

  it.each([
    [
      { ...trustRoot({}), apiVersion: 'policy.sigstore.dev/v1beta1' },
      'apiVersion: must be "policy.sigstore.dev/v1alpha1", got "policy.sigstore.dev/v1beta1" (in TrustRoot/private)',
    ],
    [{ ...trustRoot({}), kind: 'Root' }, 'kind: must be "TrustRoot", got "Root" (in TrustRoot/private)'],
    [{ ...trustRoot({}), spec: undefined }, 'spec: required object (in TrustRoot/private)'],
    [
      trustRoot({}),
      'spec: exactly one of remote, repository or sigstoreKeys is required, got none (in TrustRoot/private)',
    ],
    [
      trustRoot({ remote: { root: 'a', mirror: 'b' }, repository: { root: 'a', mirrorFS: 'b' } }),
      'spec: exactly one of remote, repository or sigstoreKeys is required, got remote, repository (in TrustRoot/private)',
    ],
    [trustRoot({ remote: { root: 'a' } }), 'spec.remote.mirror: required string (in TrustRoot/private)'],
    [
      trustRoot({ sigstoreKeys: { certificateAuthorities: [{ uri: 'x' }] } }),
      'spec.sigstoreKeys.certificateAuthorities[0].certChain: required string (in TrustRoot/private)',
    ],
    [
      trustRoot({ sigstoreKeys: { certificateAuthorities: [], tLogs: [{}] } }),
      'spec.sigstoreKeys.tLogs[0].publicKey: required string (in TrustRoot/private)',
    ],
  ])('rejects %#', (body, message) => {
    expect(() => parseTrustRoot(body)).toThrow(new PolicyParseError(undefined, '', '').constructor as never);
    expect(() => parseTrustRoot(body)).toThrow(message);
  });
});

describe('parsePolicyControllerConfig', () => {
  it('applies the upstream defaults', () => {
    const defaults = { noMatchPolicy: 'deny', failOnEmptyAuthorities: true, enableOCI11: false };
    expect(parsePolicyControllerConfig(undefined)).toEqual(defaults);
    expect(parsePolicyControllerConfig({})).toEqual(defaults);
    expect(parsePolicyControllerConfig({ _example: 'no-match-policy: warn', 'no-match-policy': '' })).toEqual(
      defaults,
    );
  });

  it('reads every key, with Go-style booleans', () => {
    expect(
      parsePolicyControllerConfig({
        'no-match-policy': 'allow',
        'fail-on-empty-authorities': 'False',
        'enable-oci11': 'T',
      }),
    ).toEqual({ noMatchPolicy: 'allow', failOnEmptyAuthorities: false, enableOCI11: true });
    expect(
      parsePolicyControllerConfig({ 'no-match-policy': 'warn', 'fail-on-empty-authorities': '1' })
        .noMatchPolicy,
    ).toBe('warn');
  });

  it.each([
    [
      { 'no-match-policy': 'ignore' },
      'data.no-match-policy: must be one of deny, warn, allow, got "ignore" (in ConfigMap/config-policy-controller)',
    ],
    [
      { 'fail-on-empty-authorities': 'yes' },
      'data.fail-on-empty-authorities: must be true or false, got "yes" (in ConfigMap/config-policy-controller)',
    ],
    [
      { 'enable-oci11': true },
      'data.enable-oci11: must be a string, got boolean (in ConfigMap/config-policy-controller)',
    ],
    ['x', 'data: must be an object, got string (in ConfigMap/config-policy-controller)'],
  ])('rejects %#', (data, message) => {
    expect(() => parsePolicyControllerConfig(data)).toThrow(message);
  });
});
