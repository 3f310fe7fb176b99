// An ImagePolicy compiles like a ClusterImagePolicy, inside its own namespace: the objects here
// are built by hand (not parsed), to show the compiler holds even for what the parser refuses.
import type { ImagePolicy } from '@signet/k8s-types';
import { beforeAll, describe, expect, it } from 'vitest';
import { SIGNATURE_FORMATS } from '../../src/formats/index.js';
import type { CompileContext } from '../../src/policy/compile.js';
import { PolicyCompileError } from '../../src/policy/errors.js';
import { compileImagePolicyAuthorities } from '../../src/policy/namespaced.js';
import { trustRootResolver } from '../../src/trust/compile.js';
import { ecKeyPair, type Infra, makeInfra, publicPem } from '../support/fixtures.js';

const KEY_PEM = publicPem(ecKeyPair());
const OTHER_PEM = publicPem(ecKeyPair());

let infra: Infra;
beforeAll(async () => {
  infra = await makeInfra();
});

function teamPolicy(spec: Partial<ImagePolicy['spec']>): ImagePolicy {
  return {
    apiVersion: 'policy.signet.dev/v1alpha1',
    kind: 'ImagePolicy',
    metadata: { name: 'ci', namespace: 'team-a' },
    spec: { images: [{ glob: 'registry.example/**' }], authorities: [], ...spec },
  };
}

/** Everything Signet could lend a policy: Secrets and ConfigMaps of two namespaces, KMS, fetches. */
function everything(): CompileContext & { fetched: string[] } {
  const fetched: string[] = [];
  const secrets: Record<string, Record<string, Uint8Array>> = {
    'team-a/release-pub': { 'cosign.pub': Buffer.from(KEY_PEM) },
    'signet-system/release-pub': { 'cosign.pub': Buffer.from(OTHER_PEM) },
  };
  const configMaps: Record<string, Record<string, string>> = {
    'team-a/rules': { sbom: 'true' },
    'signet-system/rules': { sbom: 'true' },
  };
  return {
    fetched,
    trustRoots: trustRootResolver([], { publicGood: infra.trustRoot }),
    systemNamespace: 'signet-system',
    lookupSecret: (ns, name) => secrets[`${ns}/${name}`],
    lookupConfigMap: (ns, name) => configMaps[`${ns}/${name}`],
    kmsKeys: {
      lookup: async (uri) => {
        fetched.push(uri);
        throw new Error('an ImagePolicy must never reach a KMS');
      },
    },
    fetchRemotePolicy: async (url) => {
      fetched.push(url);
      return 'true';
    },
  };
}

async function compileError(policy: ImagePolicy, context: CompileContext): Promise<PolicyCompileError> {
  try {
    await compileImagePolicyAuthorities(policy, context);
  } catch (error) {
    if (error instanceof PolicyCompileError) return error;
    throw error;
  }
  throw new Error('expected a PolicyCompileError');
}

describe('compileImagePolicyAuthorities', () => {
  it('compiles its authorities under the name namespace/name, reading Secrets of its own namespace', async () => {
    const compiled = await compileImagePolicyAuthorities(
      teamPolicy({ authorities: [{ name: 'release', key: { secretRef: { name: 'release-pub' } } }] }),
      everything(),
    );
    expect(compiled.policy).toBe('team-a/ci');
    const [authority] = compiled.authorities;
    expect(authority?.type === 'key' && authority.state.kind).toBe('ready');
  });

  it("reads the deployment's signature formats, and its index-signatures annotation", async () => {
    const authorities = [{ name: 'release', key: { data: KEY_PEM } }];
    const both = await compileImagePolicyAuthorities(teamPolicy({ authorities }), everything());
    expect(both.authorities[0]).toMatchObject({ formats: [{ name: 'legacy' }, { name: 'bundle' }] });
    expect(both.indexSignatures).toBe('index');
    const formats = SIGNATURE_FORMATS.withDefaults(['legacy']);
    const annotated = teamPolicy({ authorities });
    const upstream = await compileImagePolicyAuthorities(
      {
        ...annotated,
        metadata: { ...annotated.metadata, annotations: { 'signet.dev/index-signatures': 'platforms' } },
      },
      { ...everything(), formats },
    );
    expect(upstream.authorities[0]).toMatchObject({
      formats: [{ name: 'legacy' }],
      signatureFormat: undefined,
    });
    expect(upstream.indexSignatures).toBe('platforms');
  });

  it("never reads another namespace's Secret, even when one of the same name exists in Signet's", async () => {
    const context = everything();
    const missing = await compileImagePolicyAuthorities(
      teamPolicy({ authorities: [{ key: { secretRef: { name: 'only-in-signet' } } }] }),
      {
        ...context,
        lookupSecret: (ns, name) =>
          ns === 'signet-system' ? { k: Buffer.from(KEY_PEM) } : context.lookupSecret?.(ns, name),
      },
    );
    const [authority] = missing.authorities;
    expect(
      authority?.type !== 'static' &&
        authority?.state.kind === 'unavailable' &&
        authority.state.reason.message,
    ).toBe('Secret team-a/only-in-signet not found');
    const foreign = await compileError(
      teamPolicy({
        authorities: [{ key: { secretRef: { name: 'release-pub', namespace: 'signet-system' } } }],
      }),
      context,
    );
    expect(foreign.message).toContain('spec.authorities[0].key.secretRef.namespace');
    // Named as what it is (a ClusterImagePolicy's name never has a `/`).
    expect(foreign.message).toMatch(/^ImagePolicy "team-a\/ci": spec\.authorities\[0\]/);
  });

  it('reads ConfigMaps of its own namespace only', async () => {
    const policy = (namespace: string) =>
      teamPolicy({
        authorities: [{ key: { data: KEY_PEM } }],
        policy: { type: 'cel', configMapRef: { name: 'rules', namespace, key: 'sbom' } },
      });
    await expect(compileImagePolicyAuthorities(policy('team-a'), everything())).resolves.toMatchObject({
      policy: 'team-a/ci',
    });
    expect((await compileError(policy('signet-system'), everything())).message).toContain(
      'ConfigMap signet-system/rules not found',
    );
  });

  it("gets none of Signet's own reach: no KMS keys, no remote policies", async () => {
    const context = everything();
    const kms = await compileError(
      teamPolicy({ authorities: [{ key: { kms: 'hashivault://release' } }] }),
      context,
    );
    expect(kms.code).toBe('UNSUPPORTED_KMS');
    const remote = await compileError(
      teamPolicy({
        authorities: [{ key: { data: KEY_PEM } }],
        policy: { type: 'cel', remote: { url: 'https://10.0.0.1/p', sha256sum: 'ab'.repeat(32) } },
      }),
      context,
    );
    expect(remote.code).toBe('UNSUPPORTED_POLICY_SOURCE');
    expect(context.fetched).toEqual([]);
  });

  it('hands CUE and Rego to the engines it is given (a recording host: the real engines are tested in upstream-policies-compile)', async () => {
    const compiled: string[] = [];
    const engines = {
      compile: async (language: string, source: string) => {
        compiled.push(`${language}: ${source}`);
        return { evaluate: async () => ({ passed: true as const }) };
      },
    };
    const result = await compileImagePolicyAuthorities(
      teamPolicy({
        authorities: [{ key: { data: KEY_PEM } }],
        policy: { type: 'rego', data: 'package signet' },
      }),
      { ...everything(), engines },
    );
    expect(compiled).toEqual(['rego: package signet']);
    expect(result.specPolicy).toBeDefined();
  });

  it('compiles with no context at all', async () => {
    const compiled = await compileImagePolicyAuthorities(
      teamPolicy({ authorities: [{ key: { data: KEY_PEM } }] }),
    );
    expect(compiled.authorities).toHaveLength(1);
  });
});
