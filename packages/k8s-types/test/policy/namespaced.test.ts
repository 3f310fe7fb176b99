import { describe, expect, it } from 'vitest';
import {
  looseningsOf,
  PolicyParseError,
  parseClusterImagePolicy,
  parseImagePolicy,
  parseImagePolicyException,
} from '../../src/index.js';

const PEM = '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE...\n-----END PUBLIC KEY-----\n';

const teamPolicy = {
  apiVersion: 'policy.signet.dev/v1alpha1',
  kind: 'ImagePolicy',
  metadata: {
    name: 'team-keyless',
    namespace: 'team-a',
    uid: 'u-1',
    generation: 2,
    creationTimestamp: '2026-05-01T10:00:00Z',
  },
  spec: {
    images: [{ glob: 'ghcr.io/team-a/**' }],
    match: [{ resource: 'pods', version: 'v1' }],
    authorities: [
      {
        name: 'ci',
        keyless: {
          identities: [
            {
              issuer: 'https://token.actions.githubusercontent.com',
              subjectRegExp: '^https://github.com/team-a/',
            },
          ],
        },
        attestations: [
          {
            name: 'sbom',
            predicateType: 'https://spdx.dev/Document',
            policy: { type: 'cel', configMapRef: { name: 'rules', namespace: 'team-a', key: 'sbom' } },
          },
        ],
      },
      { name: 'release', key: { secretRef: { name: 'release-pub' } } },
      { name: 'own-ns', key: { secretRef: { name: 'release-pub', namespace: 'team-a' } } },
      { name: 'banned', static: { action: 'fail', message: 'frozen' } },
    ],
    policy: { type: 'cel', data: 'true', includeSpec: true },
  },
};

function errorOf(parse: () => unknown): PolicyParseError {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyParseError);
    return error as PolicyParseError;
  }
  throw new Error('expected a PolicyParseError');
}

function withSpec(patch: Record<string, unknown>) {
  return { ...teamPolicy, spec: { ...teamPolicy.spec, ...patch } };
}

describe('parseImagePolicy', () => {
  it('reads the ClusterImagePolicy spec fields a team may use, in its namespace', () => {
    const parsed = parseImagePolicy(teamPolicy);
    expect(parsed.metadata).toEqual(teamPolicy.metadata);
    expect(parsed.spec).toEqual(teamPolicy.spec);
    expect(parseImagePolicy(withSpec({ mode: 'enforce' })).spec.mode).toBe('enforce');
    // `mode: ''` is no mode, as in the Go types.
    expect(parseImagePolicy(withSpec({ mode: '' })).spec).not.toHaveProperty('mode');
  });

  it('takes the namespace of an object that names none from the options, as kubectl does for a file', () => {
    const { namespace: _ns, ...metadata } = teamPolicy.metadata;
    expect(parseImagePolicy({ ...teamPolicy, metadata }, { namespace: 'team-a' }).metadata.namespace).toBe(
      'team-a',
    );
    // The references are checked against the namespace it takes.
    expect(errorOf(() => parseImagePolicy({ ...teamPolicy, metadata }, { namespace: 'team-b' })).path).toBe(
      'spec.authorities[0].attestations[0].policy.configMapRef.namespace',
    );
    expect(errorOf(() => parseImagePolicy({ ...teamPolicy, metadata })).message).toBe(
      'metadata.namespace: required string (in ImagePolicy/team-keyless)',
    );
  });

  it.each([
    [
      withSpec({ mode: 'warn' }),
      'spec.mode',
      'an ImagePolicy only adds requirements, so it enforces: mode must be enforce',
    ],
    [
      withSpec({ authorities: [{ static: { action: 'pass' } }] }),
      'spec.authorities[0].static.action',
      'an ImagePolicy cannot pass images unverified (static: pass)',
    ],
    [
      withSpec({ authorities: [{ key: { secretRef: { name: 'k', namespace: 'signet-system' } } }] }),
      'spec.authorities[0].key.secretRef.namespace',
      'an ImagePolicy reads Secrets of its own namespace "team-a" only, got "signet-system"',
    ],
    [
      withSpec({
        authorities: [
          {
            keyless: {
              identities: [{ issuer: 'i', subject: 's' }],
              'ca-cert': { secretRef: { name: 'ca', namespace: 'kube-system' } },
            },
          },
        ],
      }),
      'spec.authorities[0].keyless.ca-cert.secretRef.namespace',
      'own namespace "team-a" only, got "kube-system"',
    ],
    [
      withSpec({
        authorities: [
          { key: { kms: 'awskms://attacker.example:443/arn:aws:kms:us-east-1:111122223333:alias/x' } },
        ],
      }),
      'spec.authorities[0].key.kms',
      "a KMS key is read with Signet's own cloud identity",
    ],
    [
      withSpec({
        authorities: [
          {
            key: { data: PEM },
            attestations: [
              {
                name: 'a',
                predicateType: 'x',
                policy: { type: 'rego', remote: { url: 'https://10.0.0.1/p', sha256sum: 'ab'.repeat(32) } },
              },
            ],
          },
        ],
      }),
      'spec.authorities[0].attestations[0].policy.remote',
      'an ImagePolicy cannot make Signet fetch a URL',
    ],
    [
      withSpec({ policy: { type: 'cel', configMapRef: { name: 'c', namespace: 'other', key: 'k' } } }),
      'spec.policy.configMapRef.namespace',
      'ConfigMaps of its own namespace "team-a" only, got "other"',
    ],
  ])('refuses what would loosen the cluster or borrow its privileges (%#)', (body, path, problem) => {
    const error = errorOf(() => parseImagePolicy(body));
    expect(error.path).toBe(path);
    expect(error.problem).toContain(problem);
    expect(error.object).toBe('ImagePolicy/team-a/team-keyless');
  });

  it('lists every loosening of a ClusterImagePolicy spec, for the policy webhook and migrate check', () => {
    const cip = parseClusterImagePolicy({
      apiVersion: 'policy.sigstore.dev/v1beta1',
      kind: 'ClusterImagePolicy',
      metadata: { name: 'c' },
      spec: {
        images: [{ glob: '**' }],
        mode: 'warn',
        authorities: [
          { static: { action: 'pass' } },
          { key: { secretRef: { name: 'k', namespace: 'x' } } },
          { key: { kms: 'gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/k' } },
        ],
        policy: { type: 'cue', remote: { url: 'https://p.example/p.cue', sha256sum: 'ab'.repeat(32) } },
      },
    });
    expect(looseningsOf(cip.spec, 'team-a').map((l) => l.path)).toEqual([
      'spec.mode',
      'spec.authorities[0].static.action',
      'spec.authorities[1].key.secretRef.namespace',
      'spec.authorities[2].key.kms',
      'spec.policy.remote',
    ]);
  });

  it.each([
    [{ ...teamPolicy, apiVersion: 'policy.sigstore.dev/v1beta1' }, 'apiVersion'],
    [{ ...teamPolicy, kind: 'ClusterImagePolicy' }, 'kind'],
    [{ ...teamPolicy, metadata: { name: 'p', namespace: 'Team_A' } }, 'metadata.namespace'],
    [
      { ...teamPolicy, metadata: { name: 'p', namespace: 'a', creationTimestamp: 'yesterday' } },
      'metadata.creationTimestamp',
    ],
    [withSpec({ images: [] }), 'spec.images'],
    [withSpec({ authorities: [] }), 'spec.authorities'],
  ])('names the field of a malformed object (%#)', (body, path) => {
    expect(errorOf(() => parseImagePolicy(body)).path).toBe(path);
  });

  it('allows empty authorities only when fail-on-empty-authorities is off', () => {
    expect(
      parseImagePolicy(withSpec({ authorities: [] }), { failOnEmptyAuthorities: false }).spec.authorities,
    ).toEqual([]);
  });

  it('labels an object without a readable name by kind alone', () => {
    expect(errorOf(() => parseImagePolicy({ ...teamPolicy, metadata: { name: 7 } })).object).toBeUndefined();
    expect(
      errorOf(() => parseImagePolicy({ ...teamPolicy, metadata: { name: 'p' }, spec: null })).object,
    ).toBe('ImagePolicy/p');
  });
});

const exception = {
  apiVersion: 'policy.signet.dev/v1alpha1',
  kind: 'ImagePolicyException',
  metadata: { name: 'hotfix-4711', namespace: 'team-a', creationTimestamp: '2026-05-01T10:00:00Z' },
  spec: {
    images: [{ glob: 'ghcr.io/team-a/hotfix:*' }, { digest: `sha256:${'a'.repeat(64)}` }],
    policies: [
      { kind: 'ClusterImagePolicy', name: 'release' },
      { kind: 'ImagePolicy', name: 'team-keyless' },
    ],
    reason: 'INC-4711: the hotfix build was signed by hand; re-signed by CI by Friday',
    expires: '2026-05-08T10:00:00Z',
  },
};

function exceptionWith(patch: Record<string, unknown>) {
  return { ...exception, spec: { ...exception.spec, ...patch } };
}

describe('parseImagePolicyException', () => {
  it('reads images, policies, reason and expiry', () => {
    expect(parseImagePolicyException(exception)).toEqual(exception);
    expect(
      parseImagePolicyException(exceptionWith({ expires: '2026-05-08T12:00:00.5+02:00' })).spec.expires,
    ).toBe('2026-05-08T12:00:00.5+02:00');
  });

  it.each([
    [exceptionWith({ images: [] }), 'spec.images', 'at least one image is required'],
    [exceptionWith({ images: Array(65).fill({ glob: 'x' }) }), 'spec.images', 'at most 64 entries, got 65'],
    [exceptionWith({ images: [{}] }), 'spec.images[0]', 'exactly one of glob or digest is required'],
    [
      exceptionWith({ images: [{ glob: 'a', digest: `sha256:${'a'.repeat(64)}` }] }),
      'spec.images[0]',
      'exactly one of glob or digest is required',
    ],
    [exceptionWith({ images: [{ glob: '' }] }), 'spec.images[0].glob', 'must not be empty'],
    [exceptionWith({ images: [{ digest: 'sha256:abc' }] }), 'spec.images[0].digest', 'must be sha256:'],
    [exceptionWith({ policies: [] }), 'spec.policies', 'at least one policy is required'],
    [
      exceptionWith({ policies: Array(33).fill({ kind: 'ImagePolicy', name: 'p' }) }),
      'spec.policies',
      'at most 32',
    ],
    [
      exceptionWith({ policies: [{ kind: 'TrustRoot', name: 'x' }] }),
      'spec.policies[0].kind',
      'must be one of ClusterImagePolicy, ImagePolicy, got "TrustRoot"',
    ],
    [
      exceptionWith({ policies: [{ kind: 'ClusterImagePolicy', name: '*' }] }),
      'spec.policies[0].name',
      'must be the name of a ClusterImagePolicy (no globs)',
    ],
    [exceptionWith({ reason: undefined }), 'spec.reason', 'required string'],
    [exceptionWith({ reason: '  ' }), 'spec.reason', 'must say why the exception exists'],
    [exceptionWith({ reason: 'x'.repeat(1025) }), 'spec.reason', 'at most 1024 characters, got 1025'],
    [exceptionWith({ expires: undefined }), 'spec.expires', 'required string'],
    [exceptionWith({ expires: 'next friday' }), 'spec.expires', 'must be an RFC 3339 time'],
    [exceptionWith({ expires: '2026-13-01T00:00:00Z' }), 'spec.expires', 'must be an RFC 3339 time'],
    [{ ...exception, kind: 'ImagePolicy' }, 'kind', 'must be "ImagePolicyException", got "ImagePolicy"'],
    [{ ...exception, spec: undefined }, 'spec', 'required object'],
  ])('refuses a malformed exception, naming the field (%#)', (body, path, problem) => {
    const error = errorOf(() => parseImagePolicyException(body));
    expect(error.path).toBe(path);
    expect(error.problem).toContain(problem);
  });

  it('takes the namespace of an object that names none from the options', () => {
    const body = { ...exception, metadata: { name: 'x' } };
    expect(parseImagePolicyException(body, { namespace: 'team-b' }).metadata.namespace).toBe('team-b');
    expect(errorOf(() => parseImagePolicyException(body)).path).toBe('metadata.namespace');
  });
});
