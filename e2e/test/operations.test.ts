// Day-2 operations on a real API server, with two real Signet processes (the built CLI):
// - the policy webhook: `kubectl apply` of a policy that cannot compile is refused with the
//   compile error, one that lacks a Secret is admitted with a warning, and with Signet down it
//   fails open (policies can always be fixed or deleted);
// - status: `kubectl get clusterimagepolicy` shows READY and REASON, written by the one replica
//   holding the Lease; when it dies the other takes over; policy-controller's finalizer defers it;
// - the chart's webhook options (namespace and object selectors, matchConditions, failurePolicy)
//   as the API server applies them, rendered by the real helm and pointed at a Signet process.
import { generateKeyPairSync } from 'node:crypto';
import { ensureTools, runCommand } from '@signet/testbed';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type LocalCluster, startLocalCluster } from '../src/cluster/index.ts';
import {
  createNamespace,
  deniedByWebhook,
  installPolicyCrds,
  must,
  poll,
  signetChartDir,
} from '../src/scenarios/kube.ts';
import { SIGNET_NAMESPACE, type SignetWebhook, startSignet } from '../src/signet-webhook.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);
const DIGEST = `sha256:${'b'.repeat(64)}`;

let cluster: LocalCluster | undefined;
let failed = false;
const signets: SignetWebhook[] = [];
const running = (): LocalCluster => {
  if (!cluster) throw new Error('the cluster did not start');
  return cluster;
};

const publicKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .publicKey.export({ format: 'pem', type: 'spki' })
  .toString();

function policy(
  name: string,
  authorities: object[],
  extra: { finalizers?: string[]; images?: string[] } = {},
) {
  return {
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name, ...(extra.finalizers ? { finalizers: extra.finalizers } : {}) },
    spec: { images: (extra.images ?? [`${name}.example/**`]).map((glob) => ({ glob })), authorities },
  };
}

/** `kubectl apply` of `object`; a refusal is a result, not an exception. */
const apply = (object: object) =>
  running().kubectl(['apply', '-f', '-'], { input: JSON.stringify(object), timeoutMs: 60_000 });

/** READY and REASON of a ClusterImagePolicy or TrustRoot as `kubectl get` prints them. */
async function readiness(kind: string, name: string): Promise<string> {
  const result = await running().kubectl(['get', kind, name, '--no-headers']);
  if (result.exitCode !== 0) return result.stderr.trim();
  const columns = result.stdout.trim().split(/\s+/);
  return `${columns[1]} ${columns[2]}`;
}

const waitReady = (kind: string, name: string, expected: string, timeoutMs = 30_000) =>
  poll(`${kind}/${name} to be ${expected}`, timeoutMs, async () => {
    const got = await readiness(kind, name);
    return got === expected ? true : got;
  });

async function metric(signet: SignetWebhook, pattern: RegExp): Promise<number> {
  const match = pattern.exec(await signet.metrics());
  return match ? Number(match[1]) : 0;
}

beforeAll(async () => {
  cluster = await startLocalCluster({ onProgress: (event) => log(`cluster ${event.line}`) });
  await installPolicyCrds(cluster);
  await createNamespace(cluster, SIGNET_NAMESPACE);
  // Two replicas of one installation: the same webhook name, so the same status Lease.
  for (let i = 0; i < 2; i++) signets.push(await startSignet({ cluster, insecureRegistries: [] }));
  await cluster.apply(signets[0]?.configurations() ?? []);
});

beforeEach(() => {
  onTestFailed(() => {
    failed = true;
  });
});

afterAll(async () => {
  for (const signet of signets) await signet.stop();
  if (failed && cluster) log(await cluster.logTails(40));
  await cluster?.stop(failed ? { keepRunDir: true } : {});
});

describe('the policy webhook', () => {
  it('refuses a policy that cannot compile at kubectl apply, with the compile error', async () => {
    const badKey = await apply(policy('bad-key', [{ name: 'release', key: { data: 'not a key' } }]));
    expect(badKey.exitCode).not.toBe(0);
    expect(badKey.stderr).toContain('admission webhook "policies.signet.signet.dev" denied the request');
    expect(badKey.stderr).toContain(
      'ClusterImagePolicy "bad-key": spec.authorities[0].key (authority "release")',
    );
    const badGlob = await apply({
      ...policy('bad-glob', [{ static: { action: 'pass' } }]),
      spec: { images: [{ glob: 'a[' }], authorities: [{ static: { action: 'pass' } }] },
    });
    expect(badGlob.exitCode).not.toBe(0);
    expect(badGlob.stderr).toContain('bad-glob');
    log(`refused: ${badKey.stderr.trim()}`);
    // Neither was stored.
    expect((await running().kubectl(['get', 'clusterimagepolicy', 'bad-key'])).exitCode).not.toBe(0);
  });

  it('admits a policy that only lacks a Secret, with a warning; and one that compiles', async () => {
    const later = await apply(
      policy('team-key', [{ name: 'team', key: { secretRef: { name: 'team-pub' } } }]),
    );
    expect(later.exitCode, later.stderr).toBe(0);
    expect(later.stderr).toContain(
      `Warning: authority "team": Secret ${SIGNET_NAMESPACE}/team-pub not found`,
    );
    expect((await apply(policy('release', [{ name: 'release', key: { data: publicKey } }]))).exitCode).toBe(
      0,
    );
  });
});

describe('status', () => {
  it('kubectl get shows READY and REASON for each policy and TrustRoot, and follows fixes', async () => {
    await waitReady('clusterimagepolicy', 'release', 'True Compiled');
    await waitReady('clusterimagepolicy', 'team-key', 'False AuthorityUnavailable');
    const described = must(
      await running().kubectl(['get', 'clusterimagepolicy', 'release', '-o', 'json']),
    ).stdout;
    const status = JSON.parse(described).status;
    expect(status.conditions[0].message).toBe('compiled, enforce: 1 authority (release: key)');
    expect(status.annotations['signet.dev/authorities']).toBe('release: key');
    expect(status.observedGeneration).toBe(1);
    // The Secret arrives: the policy becomes Ready.
    await running().apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'team-pub', namespace: SIGNET_NAMESPACE },
      stringData: { 'cosign.pub': publicKey },
    });
    await waitReady('clusterimagepolicy', 'team-key', 'True Compiled');
    const table = must(await running().kubectl(['get', 'clusterimagepolicies'])).stdout;
    log(table.trim());
    expect(table.split('\n')[0]).toMatch(/^NAME\s+READY\s+REASON\s+MODE\s+AGE$/);
    // A TrustRoot whose keys do not load is refused too.
    const trustRoot = {
      apiVersion: 'policy.sigstore.dev/v1alpha1',
      kind: 'TrustRoot',
      metadata: { name: 'broken-root' },
      spec: {
        sigstoreKeys: {
          tLogs: [{ baseURL: 'https://rekor.example', hashAlgorithm: 'sha256', publicKey: 'bm9wZQ==' }],
        },
      },
    };
    const refused = await apply(trustRoot);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toContain('TrustRoot "broken-root"');
  });

  it('is written by the one replica that holds the Lease', async () => {
    const leaders = await Promise.all(signets.map((s) => metric(s, /^signet_status_leader (\d+)$/m)));
    expect(leaders.sort()).toEqual([0, 1]);
    const writes = await Promise.all(
      signets.map((s) =>
        metric(s, /^signet_status_writes_total\{kind="ClusterImagePolicy",result="written"\} (\d+)$/m),
      ),
    );
    const [leader, follower] = leaders.map((_, i) => i).sort((a, b) => (writes[b] ?? 0) - (writes[a] ?? 0));
    expect(writes[leader ?? 0]).toBeGreaterThan(0);
    expect(writes[follower ?? 1]).toBe(0);
    const lease = await running().getJson<{ spec: { holderIdentity: string } }>([
      'lease',
      'signet-policy-status',
      '-n',
      SIGNET_NAMESPACE,
    ]);
    expect(lease.spec.holderIdentity).toMatch(/_[0-9a-f]{8}$/);
  });

  it("leaves an object with policy-controller's finalizer to it, and takes over when that is removed", async () => {
    const handed = policy('handed-over', [{ static: { action: 'pass' } }], {
      finalizers: ['clusterimagepolicies.policy.sigstore.dev'],
    });
    expect((await apply(handed)).exitCode).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const status = (name: string) =>
      running().kubectl(['get', 'clusterimagepolicy', name, '-o', 'jsonpath={.status}']);
    expect((await status('handed-over')).stdout).toBe('');
    must(
      await running().kubectl([
        'patch',
        'clusterimagepolicy',
        'handed-over',
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'remove', path: '/metadata/finalizers' }]),
      ]),
    );
    await waitReady('clusterimagepolicy', 'handed-over', 'True Compiled');
  });

  it('when the leader dies, the other replica takes the Lease and writes status', async () => {
    const leaders = await Promise.all(signets.map((s) => metric(s, /^signet_status_leader (\d+)$/m)));
    const leaderIndex = leaders.indexOf(1);
    const leader = signets[leaderIndex];
    const survivor = signets[1 - leaderIndex];
    if (!leader || !survivor) throw new Error('no leader');
    process.kill(leader.process.pid, 'SIGKILL');
    await leader.process.exited;
    signets.splice(leaderIndex, 1);
    // The webhooks follow the survivor.
    await running().apply(survivor.configurations());
    expect((await apply(policy('after-failover', [{ static: { action: 'pass' } }]))).exitCode).toBe(0);
    await waitReady('clusterimagepolicy', 'after-failover', 'True Compiled', 60_000);
    expect(await metric(survivor, /^signet_status_leader (\d+)$/m)).toBe(1);
  });
});

describe("the chart's webhook options on the API server", () => {
  interface Hook {
    clientConfig: Record<string, unknown>;
    [key: string]: unknown;
  }
  const render = async (target: SignetWebhook, values: object) => {
    const { helm } = await ensureTools(['helm']);
    const { stdout } = await runCommand(
      helm,
      [
        'template',
        'signet',
        signetChartDir(),
        '--namespace',
        SIGNET_NAMESPACE,
        '--set-json',
        `webhook=${JSON.stringify(values)}`,
      ],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: running().runDir }, timeoutMs: 60_000 },
    );
    // The chart's registration, pointed at the Signet process instead of the in-cluster Service.
    return parseAllDocuments(stdout)
      .map((d) => d.toJS() as { kind: string; webhooks?: Hook[] } | null)
      .filter(
        (o): o is { kind: string; webhooks: Hook[] } => o?.kind.endsWith('WebhookConfiguration') === true,
      )
      .map((config) => ({
        ...config,
        webhooks: config.webhooks.map((hook) => {
          const path = (hook.clientConfig.service as { path: string }).path;
          return { ...hook, clientConfig: { url: `${target.url}${path}`, caBundle: target.caBundle } };
        }),
      }));
  };
  const pod = (namespace: string, name: string, labels: Record<string, string> = {}) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: { containers: [{ name: 'app', image: `denied.example/app@${DIGEST}` }] },
  });
  const create = (object: object, ...flags: string[]) =>
    running().kubectl(['create', ...flags, '-f', '-'], { input: JSON.stringify(object) });

  it('namespaceSelector, objectSelector and matchConditions decide what Signet is asked about', async () => {
    const c = running();
    const target = signets[0];
    if (!target) throw new Error('no Signet running');
    await c.apply(policy('denied', [{ static: { action: 'fail', message: 'denied by the e2e policy' } }]));
    await waitReady('clusterimagepolicy', 'denied', 'True Compiled');
    await createNamespace(c, 'enforced', { 'signet.dev/enforce': 'true' });
    await createNamespace(c, 'opted-in', { 'policy.sigstore.dev/include': 'true' });
    await c.kubectl(['label', 'namespace', 'kube-system', 'signet.dev/enforce=true', '--overwrite']);
    await c.apply(
      await render(target, {
        namespaceSelector: { matchLabels: { 'signet.dev/enforce': 'true' } },
        objectSelector: { matchExpressions: [{ key: 'signet.dev/skip', operator: 'DoesNotExist' }] },
        matchConditions: [{ name: 'not-dry-run', expression: '!request.dryRun' }],
      }),
    );
    await poll('the chart webhooks to deny in the enforced namespace', 30_000, async () => {
      const result = await create(pod('enforced', `probe-${Date.now()}`));
      return deniedByWebhook(result) ? true : result.stderr || result.stdout;
    });
    const denied = await create(pod('enforced', 'checked'));
    expect(denied.stderr).toContain('denied by the e2e policy');
    // The custom selector replaces the opt-in label; kube-system is never intercepted.
    expect((await create(pod('opted-in', 'not-selected'))).exitCode).toBe(0);
    expect((await create(pod('kube-system', 'system'))).exitCode).toBe(0);
    // objectSelector: a Pod labelled to be skipped; matchConditions: a server-side dry run.
    expect((await create(pod('enforced', 'skipped', { 'signet.dev/skip': 'true' }))).exitCode).toBe(0);
    expect((await create(pod('enforced', 'dry'), '--dry-run=server')).exitCode).toBe(0);
  });

  it('failurePolicy per webhook: with Signet down, Fail refuses, Ignore admits; the policy webhook fails open', async () => {
    const c = running();
    const target = signets[0];
    if (!target) throw new Error('no Signet running');
    const enforced = {
      namespaceSelector: { matchLabels: { 'signet.dev/enforce': 'true' } },
      mutating: false,
    };
    await c.apply(await render(target, { ...enforced, validate: { failurePolicy: 'Fail' } }));
    must(await c.kubectl(['delete', 'mutatingwebhookconfiguration', 'signet', '--ignore-not-found']));
    const down = signets.splice(0);
    for (const signet of down) await signet.stop();
    const refused = await create(pod('enforced', 'while-down'));
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toContain('failed calling webhook "validating.signet.signet.dev"');
    await c.apply(await render(target, { ...enforced, validate: { failurePolicy: 'Ignore' } }));
    expect((await create(pod('enforced', 'while-down-ignored'))).exitCode).toBe(0);
    // A Signet that cannot answer never makes policies impossible to fix or delete.
    const fixed = await apply(policy('bad-key', [{ key: { data: publicKey } }]));
    expect(fixed.exitCode, fixed.stderr).toBe(0);
    expect((await c.kubectl(['delete', 'clusterimagepolicy', 'bad-key', 'denied'])).exitCode).toBe(0);
  });
});
