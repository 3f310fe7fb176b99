// ImagePolicies and ImagePolicyExceptions read from policy YAML and compiled into a snapshot: what
// parses is used, what does not is reported, and an ImagePolicy that does not parse still denies
// what it may match in its namespace.
import { generateKeyPairSync } from 'node:crypto';
import { parseReference } from '@signet/core';
import { describe, expect, it } from 'vitest';
import { SignetMetrics } from '../../src/metrics.js';
import { parsePolicyYaml, requireUsablePolicyFiles } from '../../src/policy/policy-file.js';
import { mergePolicyObjects } from '../../src/policy/policy-objects.js';
import { compileSnapshot } from '../../src/policy/policy-store.js';

const PEM = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .publicKey.export({ format: 'pem', type: 'spki' })
  .toString();
/** An authority with the key inline (JSON is YAML). */
const KEY = `{ key: { data: ${JSON.stringify(PEM)} } }`;

const CLUSTER = `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: release }
spec:
  images: [{ glob: "registry.example/**" }]
  authorities: [${KEY}]
`;

function teamPolicy(name: string, spec: string, namespace = 'team-a'): string {
  return `apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicy
metadata: { name: ${name}, namespace: ${namespace} }
spec:
${spec}
`;
}

const pod = (namespace: string) => ({ group: '', version: 'v1', resource: 'pods', labels: {}, namespace });

describe('reading namespaced objects from policy YAML', () => {
  it("sorts ImagePolicies and exceptions of policy.signet.dev, ignoring other projects' kinds of the same name", () => {
    const objects = parsePolicyYaml(
      [
        CLUSTER,
        teamPolicy(
          'ci',
          '  images: [{ glob: "registry.example/team-a/**" }]\n  authorities: [{ key: { secretRef: { name: ci-key } } }]',
        ),
        `apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicyException
metadata: { name: hotfix }
spec:
  images: [{ digest: "sha256:${'a'.repeat(64)}" }]
  policies: [{ kind: ClusterImagePolicy, name: release }]
  reason: INC-1
  expires: "2030-01-01T00:00:00Z"
`,
        `apiVersion: image.toolkit.fluxcd.io/v1beta2
kind: ImagePolicy
metadata: { name: flux }
spec: { imageRepositoryRef: { name: app } }
`,
      ].join('---\n'),
      'default',
    );
    expect(objects.problems).toEqual([]);
    expect(objects.imagePolicies.map((p) => `${p.metadata.namespace}/${p.metadata.name}`)).toEqual([
      'team-a/ci',
    ]);
    // Without a namespace, an object is in the one the file's objects default to.
    expect(objects.exceptions.map((e) => `${e.metadata.namespace}/${e.metadata.name}`)).toEqual([
      'default/hotfix',
    ]);
  });

  it('reports what does not parse by kind, namespace and name; a loosening ImagePolicy still guards its globs', async () => {
    const objects = parsePolicyYaml(
      [
        CLUSTER,
        teamPolicy(
          'loose',
          '  mode: warn\n  images: [{ glob: "registry.example/team-a/**" }]\n  authorities: [{ static: { action: pass } }]',
        ),
        teamPolicy('nowhere', '  images: [{ glob: "**" }]', 'Not_A_Namespace'),
        `apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicyException
metadata: { name: why, namespace: team-a }
spec: { images: [{ glob: "**" }], policies: [{ kind: ImagePolicy, name: loose }], expires: "2030-01-01T00:00:00Z" }
`,
      ].join('---\n'),
      'default',
    );
    expect(objects.problems.map((p) => [p.object, p.ref])).toEqual([
      [
        'ImagePolicy/team-a/loose',
        { apiVersion: 'policy.signet.dev/v1alpha1', kind: 'ImagePolicy', name: 'loose', namespace: 'team-a' },
      ],
      [
        'ImagePolicy/Not_A_Namespace/nowhere',
        {
          apiVersion: 'policy.signet.dev/v1alpha1',
          kind: 'ImagePolicy',
          name: 'nowhere',
          namespace: 'Not_A_Namespace',
        },
      ],
      [
        'ImagePolicyException/team-a/why',
        {
          apiVersion: 'policy.signet.dev/v1alpha1',
          kind: 'ImagePolicyException',
          name: 'why',
          namespace: 'team-a',
        },
      ],
    ]);
    expect(objects.problems[0]?.message).toBe(
      'spec.mode: an ImagePolicy only adds requirements, so it enforces: mode must be enforce (try a policy out with `signet audit -f` or `signet verify`) (in ImagePolicy/team-a/loose)',
    );
    expect(objects.unreadable).toEqual([
      expect.objectContaining({ kind: 'ImagePolicy', name: 'loose', namespace: 'team-a', mode: 'enforce' }),
    ]);
    expect(() => requireUsablePolicyFiles(objects)).toThrow(
      /^cannot use the policy files: .*ImagePolicy\/team-a\/loose/,
    );

    const { snapshot } = await compileSnapshot(objects, { namespace: 'signet-system' });
    const record = snapshot?.policySet.namespaced.get('team-a')?.[0];
    expect(record).toMatchObject({ name: 'team-a/loose', brokenKind: 'unreadable', mode: 'enforce' });
    expect(snapshot?.broken.get('team-a/loose')).toContain('cannot be parsed: spec.mode');
    // It denies what it may have matched, in its namespace only.
    const image = parseReference(`registry.example/team-a/app@sha256:${'b'.repeat(64)}`);
    expect(snapshot?.match(image, pod('team-a'))).toMatchObject({
      kind: 'matched',
      policies: [{ name: 'release' }, { name: 'team-a/loose' }],
    });
    expect(snapshot?.match(image, pod('team-b'))).toMatchObject({
      kind: 'matched',
      policies: [{ name: 'release' }],
    });
  });

  it('an ImagePolicy with an invalid glob guards every image of its namespace; an exception with one applies to nothing', async () => {
    const objects = parsePolicyYaml(
      [
        CLUSTER,
        teamPolicy('typo', `  images: [{ glob: "registry.example/team a/**" }]\n  authorities: [${KEY}]`),
        `apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicyException
metadata: { name: typo, namespace: team-a }
spec:
  images: [{ glob: "bad glob" }]
  policies: [{ kind: ImagePolicy, name: typo }]
  reason: INC-2
  expires: "2030-01-01T00:00:00Z"
`,
      ].join('---\n'),
      'default',
    );
    expect(objects.problems).toEqual([]);
    expect(() => requireUsablePolicyFiles(objects)).toThrow(
      'cannot use the policy files: ImagePolicy/team-a/typo: ImagePolicy "team-a/typo" spec.images[0].glob: invalid glob',
    );
    const { snapshot, problems } = await compileSnapshot(objects, { namespace: 'signet-system' });
    expect(problems.map((p) => p.object)).toEqual([
      'ImagePolicy/team-a/typo',
      'ImagePolicyException/team-a/typo',
    ]);
    expect(snapshot?.policySet.exceptions.size).toBe(0);
    const anywhere = parseReference(`registry.example/elsewhere/x@sha256:${'b'.repeat(64)}`);
    expect(snapshot?.match(anywhere, pod('team-a'), Date.now())).toMatchObject({
      kind: 'matched',
      policies: [{ name: 'release' }, { name: 'team-a/typo', brokenKind: 'invalid' }],
      exemptions: [],
    });
  });

  it("compiles an ImagePolicy's Secret references in its own namespace, never Signet's", async () => {
    const secret = (namespace: string) => `apiVersion: v1
kind: Secret
metadata: { name: ci-key, namespace: ${namespace} }
stringData: { cosign.pub: ${JSON.stringify(PEM)} }
`;
    const policy = teamPolicy(
      'ci',
      '  images: [{ glob: "**" }]\n  authorities: [{ key: { secretRef: { name: ci-key } } }]',
    );
    const state = async (...documents: string[]) => {
      const { snapshot } = await compileSnapshot(parsePolicyYaml(documents.join('---\n'), 'signet-system'), {
        namespace: 'signet-system',
      });
      const [authority] = snapshot?.policySet.namespaced.get('team-a')?.[0]?.compiled.authorities ?? [];
      return authority?.type === 'static'
        ? 'static'
        : authority?.state.kind === 'ready'
          ? 'ready'
          : authority?.state.reason.message;
    };
    expect(await state(policy, secret('team-a'))).toBe('ready');
    expect(await state(policy, secret('signet-system'))).toBe('Secret team-a/ci-key not found');
  });

  it('merges the namespaced objects of several files', () => {
    const a = parsePolicyYaml(
      teamPolicy('a', `  images: [{ glob: "**" }]\n  authorities: [${KEY}]`),
      'default',
    );
    const b = parsePolicyYaml(
      teamPolicy('b', `  images: [{ glob: "**" }]\n  authorities: [${KEY}]`, 'team-b'),
      'default',
    );
    expect(mergePolicyObjects([a, b]).imagePolicies.map((p) => p.metadata.name)).toEqual(['a', 'b']);
  });
});

describe('metrics of namespaced policies', () => {
  it('count an ImagePolicy by namespace/name, and exceptions within a bound', () => {
    const metrics = new SignetMetrics({ defaultMetrics: false, maxExceptions: 1 });
    expect(metrics.policyLabel.value('team-a/ci')).toBe('team-a/ci');
    expect(metrics.policyLabel.value('release')).toBe('release');
    expect(metrics.policyLabel.value('Team_A/ci')).toBe('_other');
    expect(metrics.exceptionLabel.value('hotfix')).toBe('hotfix');
    expect(metrics.exceptionLabel.value('another')).toBe('_other');
  });
});

describe('the background audit', () => {
  it('scans again when an ImagePolicy or an exception changes, as when a ClusterImagePolicy does', async () => {
    const { fingerprintOf } = await import('../../src/audit/background-scanner.js');
    const exception = (expires: string) => `apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicyException
metadata: { name: hotfix, namespace: team-a }
spec:
  images: [{ glob: "**" }]
  policies: [{ kind: ClusterImagePolicy, name: release }]
  reason: INC-1
  expires: "${expires}"
`;
    const fingerprint = async (...documents: string[]) => {
      const { snapshot } = await compileSnapshot(parsePolicyYaml(documents.join('---\n'), 'default'), {
        namespace: 'signet-system',
      });
      if (snapshot === undefined) throw new Error('no snapshot');
      return fingerprintOf(snapshot);
    };
    const team = (glob: string) =>
      teamPolicy('ci', `  images: [{ glob: "${glob}" }]\n  authorities: [${KEY}]`);
    const base = await fingerprint(CLUSTER, team('a/**'), exception('2030-01-01T00:00:00Z'));
    expect(await fingerprint(CLUSTER, team('a/**'), exception('2030-01-01T00:00:00Z'))).toBe(base);
    expect(await fingerprint(CLUSTER, team('b/**'), exception('2030-01-01T00:00:00Z'))).not.toBe(base);
    expect(await fingerprint(CLUSTER, team('a/**'), exception('2031-01-01T00:00:00Z'))).not.toBe(base);
    expect(await fingerprint(CLUSTER, team('a/**'))).not.toBe(base);
  });
});

describe('installing namespaced policies', () => {
  it('counts ImagePolicies with the ClusterImagePolicies, and logs them and the exceptions', async () => {
    const { createLogger } = await import('../../src/logger.js');
    const { policyApplier } = await import('../../src/policy/policy-applier.js');
    const { PolicyStore } = await import('../../src/policy/policy-store.js');
    const { LogCapture } = await import('../helpers.js');
    const logs = new LogCapture();
    const metrics = new SignetMetrics({ defaultMetrics: false });
    const apply = policyApplier({
      store: new PolicyStore(),
      compile: { namespace: 'signet-system' },
      logger: createLogger({ destination: logs }),
      metrics,
    });
    await apply(
      parsePolicyYaml(
        [
          CLUSTER,
          teamPolicy('ci', `  images: [{ glob: "**" }]\n  authorities: [${KEY}]`),
          teamPolicy('loose', '  mode: warn\n  images: [{ glob: "**" }]', 'team-b'),
          `apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicyException
metadata: { name: hotfix, namespace: team-a }
spec: { images: [{ glob: "**" }], policies: [{ kind: ImagePolicy, name: ci }], reason: INC-1, expires: "2030-01-01T00:00:00Z" }
`,
        ].join('---\n'),
        'default',
      ),
    );
    const gauge = await metrics.registry.getSingleMetricAsString('signet_policies');
    expect(gauge).toContain('signet_policies{state="active"} 2');
    expect(gauge).toContain('signet_policies{state="invalid"} 1');
    expect(logs.lines.find((l) => l.msg === 'policies loaded')).toMatchObject({
      policies: ['release', 'team-a/ci', 'team-b/loose'],
      broken: ['team-b/loose'],
      exceptions: ['team-a/hotfix'],
    });
  });
});
