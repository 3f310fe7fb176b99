// Signet's namespaced objects on a real control plane: the chart's CRDs accept the documented
// examples and themselves refuse what would loosen the cluster (no Signet running: this is the API
// server's own check, which holds while Signet's webhook cannot answer); the chart's RBAC, with
// users impersonated, lets a namespace's editors write its ImagePolicies and nothing more, and
// exceptions only to whom the cluster admin binds the exception-writer role.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureTools, runCommand } from '@signet/testbed';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type LocalCluster, startLocalCluster } from '../src/cluster/index.ts';
import { createNamespace, must, poll, signetChartDir } from '../src/scenarios/kube.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);
const EXAMPLES = join(signetChartDir(), '..', '..', '..', 'docs', 'examples', 'policies', 'namespaced');
const CRDS = ['imagepolicies.policy.signet.dev', 'imagepolicyexceptions.policy.signet.dev'];

let cluster: LocalCluster | undefined;
let failed = false;
const running = (): LocalCluster => {
  if (!cluster) throw new Error('the cluster did not start');
  return cluster;
};

beforeAll(async () => {
  cluster = await startLocalCluster({ nodes: 1, onProgress: (event) => log(`cluster ${event.line}`) });
  const dir = join(signetChartDir(), 'files', 'crds');
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.yaml')))
    must(await cluster.kubectl(['apply', '-f', join(dir, file)]));
  must(
    await cluster.kubectl(
      ['wait', '--for=condition=Established', '--timeout=60s', ...CRDS.map((c) => `crd/${c}`)],
      {
        timeoutMs: 70_000,
      },
    ),
  );
  await Promise.all(['shop', 'team-b'].map((ns) => createNamespace(running(), ns)));
});

beforeEach(() => {
  onTestFailed(() => {
    failed = true;
  });
});

afterAll(async () => {
  await cluster?.stop(failed ? { keepRunDir: true } : {});
  if (failed) log(`kept the run directory ${cluster?.runDir}`);
});

/** A server-side dry run of `object` as `user` (admin when absent): the API server's answer. */
async function dryRun(object: object, user?: string) {
  return running().kubectl(['apply', '--dry-run=server', '-f', '-', ...(user ? ['--as', user] : [])], {
    input: JSON.stringify(object),
  });
}

const imagePolicy = (spec: Record<string, unknown>, namespace = 'shop') => ({
  apiVersion: 'policy.signet.dev/v1alpha1',
  kind: 'ImagePolicy',
  metadata: { name: 'p', namespace },
  spec: { images: [{ glob: 'ghcr.io/acme-shop/**' }], authorities: [{ key: { data: 'PEM' } }], ...spec },
});

const exception = (spec: Record<string, unknown>, namespace = 'shop') => ({
  apiVersion: 'policy.signet.dev/v1alpha1',
  kind: 'ImagePolicyException',
  metadata: { name: 'e', namespace },
  spec: {
    images: [{ glob: 'ghcr.io/acme-shop/checkout*' }],
    policies: [{ kind: 'ClusterImagePolicy', name: 'release' }],
    reason: 'INC-1',
    expires: '2026-07-03T17:00:00Z',
    ...spec,
  },
});

describe('the policy.signet.dev CRDs on a real API server', () => {
  it('accept the documented examples', async () => {
    const c = running();
    const files = (await readdir(EXAMPLES)).filter((f) => f.endsWith('.yaml')).sort();
    const names: string[] = [];
    for (const file of files) {
      for (const doc of parseAllDocuments(await readFile(join(EXAMPLES, file), 'utf8'))) {
        const object = doc.toJS() as { kind: string; metadata: { name: string } };
        if (object.kind !== 'Secret') names.push(object.metadata.name);
      }
      const result = await c.kubectl(['apply', '-f', join(EXAMPLES, file)]);
      expect(result.exitCode, `${file}: ${result.stderr}`).toBe(0);
    }
    const stored = must(
      await c.kubectl([
        'get',
        'imagepolicies,imagepolicyexceptions',
        '-n',
        'shop',
        '-o',
        'jsonpath={.items[*].metadata.name}',
      ]),
    ).stdout.split(' ');
    expect(stored.sort()).toEqual(names.sort());
  });

  it.each([
    [imagePolicy({ mode: 'warn' }), 'spec.mode: Unsupported value: "warn"'],
    [
      imagePolicy({ authorities: [{ static: { action: 'pass' } }] }),
      'spec.authorities[0].static.action: Unsupported value: "pass"',
    ],
    [
      imagePolicy({ authorities: [{ key: { kms: 'hashivault://release' } }] }),
      "an ImagePolicy cannot use a KMS key (read with Signet's own cloud identity)",
    ],
    [
      imagePolicy({
        authorities: [
          {
            keyless: {
              identities: [{ issuer: 'i', subject: 's' }],
              'ca-cert': { kms: 'gcpkms://projects/p' },
            },
          },
        ],
      }),
      'spec.authorities[0].keyless.ca-cert: Invalid value',
    ],
    [
      imagePolicy({ policy: { type: 'cel', remote: { url: 'https://169.254.169.254/', sha256sum: 'ab' } } }),
      'an ImagePolicy cannot make Signet fetch a URL',
    ],
    [exception({ reason: '' }), 'spec.reason'],
    [exception({ reason: undefined }), 'spec.reason: Required value'],
    [exception({ expires: 'next friday' }), 'spec.expires'],
    [
      exception({ images: [{ glob: 'a', digest: `sha256:${'a'.repeat(64)}` }] }),
      'exactly one of glob or digest is required',
    ],
    [exception({ images: [{ digest: 'sha256:short' }] }), 'spec.images[0].digest'],
    [
      exception({ policies: [{ kind: 'TrustRoot', name: 'x' }] }),
      'spec.policies[0].kind: Unsupported value: "TrustRoot"',
    ],
    [exception({ images: [] }), 'spec.images'],
  ])('refuse what a team may not write, by themselves (%#)', async (object, message) => {
    const result = await dryRun(object);
    expect(result.exitCode, result.stdout).not.toBe(0);
    expect(result.stderr).toContain(message);
  });
});

describe("the chart's RBAC, with users impersonated", () => {
  beforeAll(async () => {
    const c = running();
    const { helm } = await ensureTools(['helm'], { onProgress: (event) => log(`tools: ${event.message}`) });
    const { stdout } = await runCommand(
      helm,
      [
        'template',
        'signet',
        signetChartDir(),
        '--namespace',
        'signet-system',
        '--set',
        'namespacedPolicies.exceptions.writerRole=true',
        '--show-only',
        'templates/rbac.yaml',
      ],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: c.runDir }, timeoutMs: 60_000 },
    );
    const roles = parseAllDocuments(stdout)
      .map((doc) => doc.toJS() as { kind: string; metadata: { name: string } } | null)
      .filter((o) => o?.kind === 'ClusterRole' && o.metadata.name !== 'signet-webhook');
    expect(roles.map((r) => r?.metadata.name).sort()).toEqual([
      'signet-webhook-exception-writer',
      'signet-webhook-imagepolicy-edit',
      'signet-webhook-imagepolicy-view',
    ]);
    await c.apply(roles as object[]);
    const bind = (name: string, user: string, role: string) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace: 'shop' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    });
    await c.apply([
      bind('alice-edit', 'alice', 'edit'),
      bind('carol-admin', 'carol', 'admin'),
      bind('sam-view', 'sam', 'view'),
      bind('sec-exceptions', 'sec', 'signet-webhook-exception-writer'),
    ]);
    // The built-in roles gain the aggregated rules once kube-controller-manager has seen them.
    await poll('the edit role to aggregate ImagePolicies', 60_000, async () => {
      const result = await c.kubectl([
        'auth',
        'can-i',
        'create',
        'imagepolicies.policy.signet.dev',
        '-n',
        'shop',
        '--as',
        'alice',
      ]);
      return result.stdout.trim() === 'yes' ? true : result.stdout.trim() || result.stderr.trim();
    });
  });

  const can = async (user: string, verb: string, resource: string, namespace: string) =>
    (
      await running().kubectl([
        'auth',
        'can-i',
        verb,
        `${resource}.policy.signet.dev`,
        '-n',
        namespace,
        '--as',
        user,
      ])
    ).stdout.trim();

  it("a namespace's editors and admins write its ImagePolicies, not another namespace's, and no exceptions", async () => {
    for (const user of ['alice', 'carol']) {
      expect(await can(user, 'create', 'imagepolicies', 'shop'), user).toBe('yes');
      expect(await can(user, 'delete', 'imagepolicies', 'shop'), user).toBe('yes');
      expect(await can(user, 'create', 'imagepolicies', 'team-b'), user).toBe('no');
      expect(await can(user, 'create', 'imagepolicyexceptions', 'shop'), user).toBe('no');
      expect(await can(user, 'list', 'imagepolicyexceptions', 'shop'), user).toBe('yes');
    }
    const written = await dryRun(imagePolicy({}), 'alice');
    expect(written.exitCode, written.stderr).toBe(0);
    const elsewhere = await dryRun(imagePolicy({}, 'team-b'), 'alice');
    expect(elsewhere.stderr).toContain('is forbidden');
    const own = await dryRun(exception({}), 'alice');
    expect(own.stderr).toContain(
      'User "alice" cannot create resource "imagepolicyexceptions" in API group "policy.signet.dev"',
    );
  });

  it('viewers read ImagePolicies and exceptions, and write neither', async () => {
    expect(await can('sam', 'list', 'imagepolicies', 'shop')).toBe('yes');
    expect(await can('sam', 'get', 'imagepolicyexceptions', 'shop')).toBe('yes');
    expect(await can('sam', 'create', 'imagepolicies', 'shop')).toBe('no');
  });

  it('exceptions are written by whom the cluster admin binds the writer role, in that namespace only', async () => {
    expect(await can('sec', 'create', 'imagepolicyexceptions', 'shop')).toBe('yes');
    expect(await can('sec', 'create', 'imagepolicyexceptions', 'team-b')).toBe('no');
    expect(await can('sec', 'create', 'imagepolicies', 'shop')).toBe('no');
    const written = await dryRun(exception({}), 'sec');
    expect(written.exitCode, written.stderr).toBe(0);
  });

  it("a namespace admin cannot grant herself the exception-writer role (RBAC's escalation check)", async () => {
    const result = await running().kubectl(['apply', '-f', '-', '--as', 'carol'], {
      input: JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'carol-exceptions', namespace: 'shop' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'signet-webhook-exception-writer',
        },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'carol' }],
      }),
    });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('is attempting to grant RBAC permissions not currently held');
  });
});
