// Namespaced ImagePolicies and ImagePolicyExceptions read from a real control plane by `signet
// serve` (a host process, through its kubeconfig): enforced as the contract's N-rows say, their keys
// read from the team's own Secrets and a rotated key taken without a restart, their status written
// (an exception's at its expiry, with nothing changing), an Event per exception use on the owner,
// bounded; an ImagePolicy added in the middle of a rollout does not wedge it; `signet audit`, the
// background audit's PolicyReports and `signet migrate check` read them too. Images are signed by
// the real cosign: the cluster's key (the ClusterImagePolicy) and a team's key (its ImagePolicy).
import { generateKeyPairSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type CosignKeyPair, ensureTools, pushRandomImage } from '@signet/testbed';
import { ClusterPolicySource, createLogger, openKubeApi, type PolicyObjects } from '@signet/webhook';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { installPolicyReportCrds } from '../src/audit/policy-report-crds.ts';
import { runSignetCli } from '../src/audit/signet-cli.ts';
import { manifestText } from '../src/cluster/index.ts';
import { createNamespace, deniedByWebhook, must, poll } from '../src/scenarios/kube.ts';
import { INCLUDE_LABEL, runRolloutScenario } from '../src/scenarios/rollout.ts';
import {
  KEY_POLICY,
  type SignetEnvironment,
  startSignetEnvironment,
} from '../src/scenarios/signet-environment.ts';
import { workloadManifest } from '../src/scenarios/workloads.ts';
import { SIGNET_NAMESPACE, type SignetWebhook, startSignet } from '../src/signet-webhook.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TEAM = 'team-b';
const ROLLOUT = 'rollout';
const BROKEN = 'team-c';

interface Images {
  /** Signed by the cluster's key and the team's. */
  both: string;
  /** Signed by the team's key only, in the repository the ClusterImagePolicy covers. */
  teamOnly: string;
  /** Signed by the team's key only, where no ClusterImagePolicy matches. */
  teamTool: string;
}

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
}
interface Stored {
  readonly metadata: { generation: number };
  readonly status?: { observedGeneration?: number; conditions?: Condition[] };
}

const secret = (namespace: string, name: string, pem: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace },
  stringData: { 'cosign.pub': pem },
});

const imagePolicy = (namespace: string, name: string, glob: string, secretName: string) => ({
  apiVersion: 'policy.signet.dev/v1alpha1',
  kind: 'ImagePolicy',
  metadata: { name, namespace },
  spec: { images: [{ glob }], authorities: [{ name: 'team-key', key: { secretRef: { name: secretName } } }] },
});

describe('Signet with namespaced policies from the cluster', () => {
  let env: SignetEnvironment | undefined;
  let teamKey: CosignKeyPair;
  let teamPem = '';
  const images = {} as Images;
  let failed = false;
  const environment = (): SignetEnvironment => {
    if (!env) throw new Error('the environment did not start');
    return env;
  };
  const cluster = () => environment().cluster;
  const signet = () => environment().signet;
  const create = (object: object, extra: readonly string[] = []) =>
    cluster().kubectl(['create', '-f', '-', ...extra], { input: manifestText(object) });
  const pod = (namespace: string, name: string, image: string) =>
    workloadManifest('Pod', namespace, name, image);
  const stored = (kind: string, namespace: string, name: string) =>
    cluster().getJson<Stored>([kind, name, '-n', namespace]);
  const readyOf = async (kind: string, namespace: string, name: string) => {
    const object = await stored(kind, namespace, name);
    return { object, ready: object.status?.conditions?.find((c) => c.type === 'Ready') };
  };
  /** The names in Signet's last `policies loaded` line: usable policies and exceptions. */
  const loaded = async () => {
    const lines = (await readFile(signet().logFile, 'utf8'))
      .split('\n')
      .filter((l) => l.includes('"policies loaded"'));
    const last = JSON.parse(lines.at(-1) ?? '{}') as {
      policies?: string[];
      exceptions?: string[];
      broken?: string[];
    };
    return { policies: last.policies ?? [], exceptions: last.exceptions ?? [], broken: last.broken ?? [] };
  };
  const uses = async (exception: string) =>
    Number(
      new RegExp(`signet_exception_uses_total\\{namespace="${TEAM}",exception="${exception}"\\} (\\d+)`).exec(
        await signet().metrics(),
      )?.[1] ?? 0,
    );

  beforeAll(async () => {
    env = await startSignetEnvironment({
      onProgress: log,
      prepare: async ({ cluster, images: base }) => {
        const { crane } = await ensureTools(['crane']);
        teamKey = await base.cosign.generateKeyPair(join(cluster.runDir, 'team-key'), 'team');
        teamPem = await readFile(teamKey.publicKey, 'utf8');
        const push = async (repo: string, tag: string) =>
          `${base.registry.host}/${repo}@${await pushRandomImage(base.registry, repo, tag, { crane, workDir: cluster.runDir })}`;
        images.both = await push('app', 'v3');
        images.teamOnly = await push('app', 'v4');
        images.teamTool = await push('team/tool', 'v1');
        await base.cosign.signLegacyKeyed(images.both, base.key);
        for (const image of [images.both, images.teamOnly, images.teamTool])
          await base.cosign.signLegacyKeyed(image, teamKey);
        log(`images: ${JSON.stringify(images, null, 2)}`);
        return { insecureRegistries: [], policies: [], policyNames: [] };
      },
    });
    try {
      const c = cluster();
      await Promise.all([
        createNamespace(c, TEAM, { [INCLUDE_LABEL]: 'true' }),
        createNamespace(c, BROKEN, { [INCLUDE_LABEL]: 'true' }),
        installPolicyReportCrds(c),
      ]);
      // Before the policy webhook is registered (it would refuse a key that is not a key): an
      // ImagePolicy that cannot compile, as one that got in while Signet could not answer.
      await c.apply({
        apiVersion: 'policy.signet.dev/v1alpha1',
        kind: 'ImagePolicy',
        metadata: { name: 'bad-key', namespace: BROKEN },
        spec: {
          images: [{ glob: `${environment().images.registry.host}/app*` }],
          authorities: [{ key: { data: 'not a key' } }],
        },
      });
      await c.apply(signet().configurations());
      await poll('Signet to deny an unsigned Pod', 30_000, async () => {
        const probe = await create(pod(TEAM, 'probe', environment().images.unsigned), ['--dry-run=server']);
        return deniedByWebhook(probe) ? true : `exit ${probe.exitCode}: ${probe.stderr.trim()}`;
      });
    } catch (error) {
      failed = true;
      throw new Error(`${(error as Error).message}\n${await cluster().logTails(15)}`, { cause: error });
    }
  });

  beforeEach(() => {
    onTestFailed(() => {
      failed = true;
    });
  });

  afterAll(async () => {
    await env?.signet.stop();
    await env?.cluster.stop(failed ? { keepRunDir: true } : {});
    if (failed) log(`kept the run directory ${env?.cluster.runDir} (Signet log: ${env?.signet.logFile})`);
  });

  it('an ImagePolicy added in the middle of a rollout does not wedge it: the old ReplicaSet scales down', async () => {
    const { images: base } = environment();
    let policyLoadedAt = 0;
    // Both images pass the cluster's policy; only the new one also carries the team's key.
    const observed = await runRolloutScenario(cluster(), signet(), {
      namespace: ROLLOUT,
      unsignedImage: base.signed,
      signedImage: images.both,
      enforcementProbeImage: base.unsigned,
      replicas: 3,
      minReadySeconds: 3,
      rolloutDeadlineMs: 90_000,
      onProgress: (message) => log(`rollout: ${message}`),
      midRollout: {
        when: (state) =>
          state.replicaSets.some((rs) => rs.image === base.signed && rs.pods >= 2) &&
          state.replicaSets.some((rs) => rs.image === images.both && rs.pods >= 1),
        action: async () => {
          await cluster().apply([
            secret(ROLLOUT, 'team-key', teamPem),
            imagePolicy(ROLLOUT, 'team', `${base.registry.host}/app*`, 'team-key'),
          ]);
          await poll('Signet to load rollout/team', 30_000, async () => {
            const { policies, broken } = await loaded();
            return policies.includes(`${ROLLOUT}/team`) && !broken.includes(`${ROLLOUT}/team`)
              ? true
              : JSON.stringify({ policies, broken });
          });
          policyLoadedAt = Date.now();
          log('rollout: ImagePolicy rollout/team loaded in the middle of the rollout');
        },
      },
    });
    expect(observed.midRolloutDone, 'the ImagePolicy was applied during the rollout').toBe(true);
    expect(observed.completed, observed.deployment.table).toBe(true);
    expect(observed.controllerDenials).toEqual([]);
    expect(observed.oldReplicaSet).toMatchObject({ desired: 0, pods: 0 });
    expect(observed.newReplicaSet).toMatchObject({ desired: 3, pods: 3, readyPods: 3 });
    // The old ReplicaSet's template fails the new ImagePolicy; its scale-downs after it loaded were admitted.
    const scaleDowns = observed.admissions.filter(
      (a) =>
        a.endpoint === 'validate' &&
        a.kind === 'ReplicaSet' &&
        a.operation === 'UPDATE' &&
        a.rule === 'scale-down' &&
        Date.parse(a.time) > policyLoadedAt,
    );
    expect(scaleDowns.length, 'a scale-down after the ImagePolicy loaded').toBeGreaterThan(0);
    expect(scaleDowns.every((a) => a.decision === 'allowed')).toBe(true);
    // ...and it is in force: a new Pod of the old image is denied, naming it.
    const old = await create(pod(ROLLOUT, 'old-image', base.signed), ['--dry-run=server']);
    expect(deniedByWebhook(old), old.stderr).toBe(true);
    expect(old.stderr).toContain(`policy "${ROLLOUT}/team" (enforce)`);
    log(
      `rollout: completed in ${observed.secondsToComplete}s, ${scaleDowns.length} scale-downs admitted under the new policy`,
    );
  });

  it("reads the team's key from its Secret, says so in the status, and takes a rotated key without a restart", async () => {
    const { images: base } = environment();
    // The key in the Secret is not the team's yet: the team's policy fails what the team signed.
    const stale = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .publicKey.export({ format: 'pem', type: 'spki' })
      .toString();
    await cluster().apply([
      secret(TEAM, 'team-key', stale),
      imagePolicy(TEAM, 'ci', `${base.registry.host}/app*`, 'team-key'),
      imagePolicy(TEAM, 'waiting', `${base.registry.host}/nothing/*`, 'not-yet'),
    ]);
    await poll('team-b/ci to be Ready', 30_000, async () => {
      const { object, ready } = await readyOf('imagepolicy', TEAM, 'ci');
      return ready?.status === 'True' && object.status?.observedGeneration === object.metadata.generation
        ? true
        : JSON.stringify(object.status);
    });
    expect((await readyOf('imagepolicy', TEAM, 'ci')).ready).toMatchObject({
      reason: 'Compiled',
      message: 'compiled, enforce: 1 authority (team-key: key)',
    });
    const table = must(await cluster().kubectl(['get', 'imagepolicies', '-n', TEAM])).stdout;
    expect(table).toMatch(/^NAME\s+READY\s+REASON\s+AGE$/m);
    expect(table).toMatch(/^ci\s+True\s+Compiled\s/m);
    expect(table).toMatch(/^waiting\s+False\s+AuthorityUnavailable\s/m);
    expect((await readyOf('imagepolicy', TEAM, 'waiting')).ready?.message).toContain(
      `Secret ${TEAM}/not-yet not found`,
    );
    const denied = await create(pod(TEAM, 'both', images.both), ['--dry-run=server']);
    expect(deniedByWebhook(denied), denied.stderr).toBe(true);
    expect(denied.stderr).toContain(`policy "${TEAM}/ci" (enforce): no valid signature`);

    const rotated = Date.now();
    await cluster().apply(secret(TEAM, 'team-key', teamPem));
    await poll('the rotated key to be taken', 60_000, async () => {
      const result = await create(pod(TEAM, 'both', images.both), ['--dry-run=server']);
      return result.exitCode === 0 ? true : result.stderr.trim();
    });
    const seconds = (Date.now() - rotated) / 1000;
    log(`secret: the rotated key was taken after ${seconds.toFixed(1)}s (read again every 30s)`);
    expect(seconds).toBeLessThan(45);
  });

  it('an ImagePolicy that cannot compile: Invalid, with a Warning Event in its namespace, and it denies what it matches there', async () => {
    await poll('team-c/bad-key to say Invalid', 30_000, async () => {
      const { ready } = await readyOf('imagepolicy', BROKEN, 'bad-key');
      return ready?.reason === 'Invalid' ? true : JSON.stringify(ready);
    });
    const events = await cluster().getJson<{ items: { reason: string; type: string; message: string }[] }>([
      'events',
      '-n',
      BROKEN,
      '--field-selector',
      'involvedObject.kind=ImagePolicy,involvedObject.name=bad-key',
    ]);
    expect(events.items.map((e) => [e.type, e.reason])).toContainEqual(['Warning', 'InvalidPolicy']);
    const denied = await create(pod(BROKEN, 'signed', environment().images.signed), ['--dry-run=server']);
    expect(deniedByWebhook(denied), denied.stderr).toBe(true);
    expect(denied.stderr).toContain(
      `policy "${BROKEN}/bad-key" (enforce): disallowed by static policy: policy cannot be enforced: ImagePolicy "${BROKEN}/bad-key": spec.authorities[0].key`,
    );
  });

  it('no ImagePolicy loosens a ClusterImagePolicy: what the team signed alone is denied by the cluster', async () => {
    // Both of the team's policies pass these; the cluster's does not, or none of its matches.
    const notCluster = await create(pod(TEAM, 'team-only', images.teamOnly), ['--dry-run=server']);
    expect(deniedByWebhook(notCluster), notCluster.stderr).toBe(true);
    expect(notCluster.stderr).toContain(`policy "${KEY_POLICY}" (enforce)`);
    expect(notCluster.stderr).not.toContain(`policy "${TEAM}/ci"`);
    await cluster().apply(
      imagePolicy(TEAM, 'tools', `${environment().images.registry.host}/team/**`, 'team-key'),
    );
    await poll('team-b/tools to load', 30_000, async () =>
      (await loaded()).policies.includes(`${TEAM}/tools`) ? true : 'not yet',
    );
    const noMatch = await create(pod(TEAM, 'tool', images.teamTool), ['--dry-run=server']);
    expect(deniedByWebhook(noMatch), noMatch.stderr).toBe(true);
    expect(noMatch.stderr).toContain('no ClusterImagePolicy matches');
    // What would loosen the cluster cannot even be stored.
    const loose = await create({
      ...imagePolicy(TEAM, 'loose', '**', 'team-key'),
      spec: { images: [{ glob: '**' }], authorities: [{ static: { action: 'pass' } }] },
    });
    expect(loose.exitCode).not.toBe(0);
    expect(loose.stderr).toContain('Unsupported value: "pass"');
  });

  describe('an exception that expires', () => {
    let auditor: SignetWebhook | undefined;
    let expiresAt = 0;
    const reports = async () =>
      (
        await cluster().getJson<{
          items: { results?: { policy: string; result: string; properties: Record<string, string> }[] }[];
        }>(['policyreports.wgpolicyk8s.io', '-n', TEAM, '-l', 'app.kubernetes.io/managed-by=signet'])
      ).items.flatMap((r) => r.results ?? []);
    const reported = async (workload: string, policy: string) =>
      (await reports()).find((r) => r.properties.workload === workload && r.policy === policy)?.result;
    const auditHotfix = async () => {
      const result = await runSignetCli(
        [
          'audit',
          `--kubeconfig=${cluster().kubeconfig}`,
          `--signet-namespace=${SIGNET_NAMESPACE}`,
          `--insecure-registry=${environment().images.registry.host}`,
          '-n',
          TEAM,
          '-l',
          'app=hotfix',
          '-o',
          'json',
          '-q',
        ],
        { home: cluster().runDir },
      );
      const report = JSON.parse(result.stdout) as {
        objects: {
          kind: string;
          result: string;
          findings: { policy: string; result: string; reason: string }[];
        }[];
      };
      return { code: result.code, deployment: report.objects.find((o) => o.kind === 'Deployment') };
    };

    beforeAll(async () => {
      // A second replica with the background audit on (the scan Lease is its own).
      auditor = await startSignet({
        cluster: cluster(),
        insecureRegistries: [environment().images.registry.host],
        processName: 'signet-auditor',
        extraArgs: ['--audit-interval=1h', '--leader-identity=auditor', '--shutdown-drain=0s'],
      });
    });

    afterAll(async () => {
      await auditor?.stop();
    });

    it('admits the exempted image with a warning until it expires, then denies it at once; the status follows by itself', async () => {
      const { images: base } = environment();
      // The cluster's key signed base.signed, the team's did not: team-b/ci denies it.
      const before = await create(pod(TEAM, 'hotfix-probe', base.signed), ['--dry-run=server']);
      expect(before.stderr).toContain(`policy "${TEAM}/ci" (enforce)`);
      const created = Date.now();
      expiresAt = Math.ceil((created + 45_000) / 1000) * 1000;
      const expires = new Date(expiresAt).toISOString().replace(/\.000Z$/, 'Z');
      await cluster().apply({
        apiVersion: 'policy.signet.dev/v1alpha1',
        kind: 'ImagePolicyException',
        metadata: { name: 'hotfix', namespace: TEAM },
        spec: {
          images: [{ digest: base.signed.split('@')[1] }],
          policies: [{ kind: 'ImagePolicy', name: 'ci' }],
          reason: 'INC-7: hand-built hotfix',
          expires,
        },
      });
      await poll('Signet to load the exception', 30_000, async () =>
        (await loaded()).exceptions.includes(`${TEAM}/hotfix`) ? true : 'not yet',
      );
      const applied = await cluster().kubectl(['apply', '-f', '-'], {
        input: manifestText(workloadManifest('Deployment', TEAM, 'hotfix', base.signed, { replicas: 3 })),
      });
      expect(applied.exitCode, applied.stderr).toBe(0);
      expect(applied.stderr).toContain(
        `policy "${TEAM}/ci" not applied: exempted by ImagePolicyException ${TEAM}/hotfix until ${expires} (INC-7: hand-built hotfix)`,
      );
      must(
        await cluster().kubectl(['rollout', 'status', 'deployment/hotfix', '-n', TEAM, '--timeout=60s'], {
          timeoutMs: 70_000,
        }),
      );
      const active = must(await cluster().kubectl(['get', 'imagepolicyexceptions', '-n', TEAM])).stdout;
      expect(active).toMatch(/^NAME\s+EXPIRES\s+READY\s+STATE\s+AGE$/m);
      expect(active).toMatch(new RegExp(`^hotfix\\s+${expires}\\s+True\\s+Active\\s`, 'm'));
      // Each use is counted: the Deployment, its ReplicaSet and three Pods.
      expect(await uses('hotfix')).toBeGreaterThanOrEqual(5);
      // An Event on each owner, once: three Pods of one ReplicaSet make one Event on it.
      let events: { involvedObject: { kind: string; name: string }; message: string }[] = [];
      await poll('the exception-use Events', 20_000, async () => {
        events = (
          await cluster().getJson<{ items: typeof events }>([
            'events',
            '-n',
            TEAM,
            '--field-selector',
            'reason=PolicyExempted',
          ])
        ).items;
        return events.some((e) => e.involvedObject.kind === 'ReplicaSet') ? true : `${events.length} Events`;
      });
      const kinds = events.map((e) => e.involvedObject.kind).sort();
      expect(kinds).toEqual(['Deployment', 'Namespace', 'ReplicaSet']);
      const onReplicaSet = events.find((e) => e.involvedObject.kind === 'ReplicaSet');
      expect(onReplicaSet?.message).toMatch(
        new RegExp(
          `^Pod hotfix-\\S+ admitted: spec\\.containers\\[0\\]\\.image \\S+ without policy "${TEAM}/ci": exempted by ImagePolicyException ${TEAM}/hotfix until ${expires} \\(INC-7: hand-built hotfix\\)$`,
        ),
      );
      // `signet audit` reads the exception from the cluster; so does the background audit, which
      // scans again on any policy change (here, another ImagePolicy of the namespace).
      await cluster().apply(imagePolicy(TEAM, 'waiting', `${base.registry.host}/nothing-yet/*`, 'not-yet'));
      const audited = await auditHotfix();
      expect(audited.code).toBe(0);
      expect(audited.deployment?.findings).toContainEqual(
        expect.objectContaining({
          policy: `${TEAM}/ci`,
          result: 'warn',
          reason: expect.stringContaining(`exempted by ImagePolicyException ${TEAM}/hotfix`),
        }),
      );
      await poll(
        'the PolicyReport to show the exemption',
        Math.max(5_000, expiresAt - Date.now() - 2_000),
        async () => {
          const result = await reported('Deployment/hotfix', `${TEAM}/ci`);
          return result === 'warn' ? true : `Deployment/hotfix: ${result}`;
        },
      );
      expect(Date.now(), 'the checks before the expiry took too long').toBeLessThan(expiresAt - 1_000);

      // At the expiry: denied at once, no controller in the loop.
      await sleep(expiresAt - Date.now() + 200);
      const after = await cluster().kubectl([
        'run',
        'after-expiry',
        '-n',
        TEAM,
        `--image=${base.signed}`,
        '--restart=Never',
      ]);
      expect(deniedByWebhook(after), after.stderr).toBe(true);
      expect(after.stderr).toContain(`policy "${TEAM}/ci" (enforce)`);
      expect(after.stderr).not.toContain('exempted');
      await poll('the status to say Expired', 10_000, async () => {
        const { ready } = await readyOf('imagepolicyexception', TEAM, 'hotfix');
        return ready?.reason === 'Expired' ? true : JSON.stringify(ready);
      });
      const lag = (Date.now() - expiresAt) / 1000;
      log(`exception: Expired in its status ${lag.toFixed(1)}s after its expiry`);
      const expired = must(await cluster().kubectl(['get', 'imagepolicyexceptions', '-n', TEAM])).stdout;
      expect(expired).toMatch(new RegExp(`^hotfix\\s+${expires}\\s+False\\s+Expired\\s`, 'm'));
      // What runs is not touched; what starts no container is still admitted.
      must(await cluster().kubectl(['scale', 'deployment/hotfix', '--replicas=1', '-n', TEAM]));
      must(
        await cluster().kubectl(['rollout', 'status', 'deployment/hotfix', '-n', TEAM, '--timeout=60s'], {
          timeoutMs: 70_000,
        }),
      );
      const fail = await auditHotfix();
      expect(fail.code).toBe(1);
      expect(fail.deployment?.findings).toContainEqual(
        expect.objectContaining({ policy: `${TEAM}/ci`, result: 'fail' }),
      );
      await poll('the PolicyReport to follow the expiry without any change', 60_000, async () => {
        const result = await reported('Deployment/hotfix', `${TEAM}/ci`);
        return result === 'fail' ? true : `Deployment/hotfix: ${result}`;
      });
    });
  });

  it('signet migrate check says ImagePolicies and exceptions are Signet-only, never carried over', async () => {
    const result = await runSignetCli(
      [
        'migrate',
        'check',
        `--kubeconfig=${cluster().kubeconfig}`,
        `--signet-namespace=${SIGNET_NAMESPACE}`,
        '-o',
        'json',
      ],
      { home: cluster().runDir },
    );
    const findings = (
      JSON.parse(result.stdout) as { findings: { severity: string; subject: string; message: string }[] }
    ).findings;
    expect(findings.find((f) => f.subject === 'crd/imagepolicies.policy.signet.dev')).toEqual({
      severity: 'ok',
      subject: 'crd/imagepolicies.policy.signet.dev',
      message:
        `ImagePolicy (policy.signet.dev) is Signet's own; policy-controller has no such kind, so nothing of it is carried over. 5 in namespaces ${ROLLOUT}, ${TEAM}, ${BROKEN}: only Signet enforces them`.replace(
          `${ROLLOUT}, ${TEAM}, ${BROKEN}`,
          [ROLLOUT, TEAM, BROKEN].sort().join(', '),
        ),
    });
    expect(
      findings.find((f) => f.subject === 'crd/imagepolicyexceptions.policy.signet.dev')?.message,
    ).toContain(`1 in namespace ${TEAM}: only Signet enforces them`);
  });

  it('reads only the Secrets and ConfigMaps ImagePolicies name, in their namespace, within bounds, and again on schedule', async () => {
    const c = cluster();
    const namespace = 'bounds';
    await createNamespace(c, namespace);
    const data = (bytes: number) => ({ 'cosign.pub': Buffer.alloc(bytes, 'k').toString('base64') });
    const secretOf = (name: string, bytes: number) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace },
      data: data(bytes),
    });
    await c.apply([
      secretOf('big', 2000),
      secretOf('small-a', 100),
      secretOf('small-b', 100),
      secretOf('small-c', 100),
      secretOf('unnamed', 100),
      // A team's ConfigMap named as Signet's configuration: never taken for it.
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'config-policy-controller', namespace },
        data: { 'no-match-policy': 'allow' },
      },
      {
        apiVersion: 'policy.signet.dev/v1alpha1',
        kind: 'ImagePolicy',
        metadata: { name: 'many', namespace },
        spec: {
          images: [{ glob: 'bounds.example/**' }],
          authorities: ['big', 'small-a', 'small-b', 'small-c'].map((name) => ({
            key: { secretRef: { name } },
          })),
          policy: { type: 'cel', configMapRef: { name: 'config-policy-controller', key: 'no-match-policy' } },
        },
      },
    ]);
    const seen: PolicyObjects[] = [];
    const source = new ClusterPolicySource({
      api: openKubeApi({ kubeconfig: c.kubeconfig }),
      namespace: SIGNET_NAMESPACE,
      logger: createLogger({ level: 'silent' }),
      onChange: (objects) => seen.push(objects),
      debounceMs: 50,
      // 146 bytes each small Secret (base64 and key); the big one 2,678.
      referencedInputs: { refreshMs: 1000, maxObjects: 4, maxObjectBytes: 1000, maxTotalBytes: 300 },
    });
    await source.start();
    try {
      await source.synced;
      const first = seen[0];
      const teamSecrets = (objects: PolicyObjects | undefined) =>
        objects?.secrets.filter((s) => s.namespace === namespace).map((s) => s.name);
      // Delivered only once the references were read: the first view has them.
      expect(teamSecrets(first)).toEqual(['small-a', 'small-b']);
      expect(first?.config.noMatchPolicy).toBe('deny');
      expect(first?.configMaps.some((m) => m.namespace === namespace)).toBe(false);
      const problems = Object.fromEntries(
        (first?.problems ?? [])
          .filter((p) => p.object.includes(`/${namespace}/`))
          .map((p) => [p.object, p.message]),
      );
      expect(problems).toEqual({
        [`ConfigMap/${namespace}/config-policy-controller`]: expect.stringContaining(
          "that name is Signet's configuration's",
        ),
        [`Secret/${namespace}/big`]: expect.stringContaining(
          'holds 2678 bytes of data; Signet reads at most 1000',
        ),
        [`Secret/${namespace}/small-c`]: expect.stringContaining('beyond the 4 Secrets and ConfigMaps'),
      });
      // 'unnamed' is never read: no ImagePolicy names it.
      expect(JSON.stringify(seen)).not.toContain('unnamed');
      // Read again on schedule: a changed key is delivered without any watch event on it.
      await c.apply({
        ...secretOf('small-a', 10),
        data: { 'cosign.pub': Buffer.from('rotated').toString('base64') },
      });
      await poll('the rotated Secret to be delivered', 15_000, async () => {
        const latest = seen.at(-1)?.secrets.find((s) => s.namespace === namespace && s.name === 'small-a');
        return Buffer.from(latest?.data['cosign.pub'] ?? []).toString() === 'rotated' ? true : 'not yet';
      });
      // Over the total: small-b goes (the last in order) once small-a is back to its size.
      await c.apply(secretOf('small-a', 100));
      await c.apply(secretOf('small-b', 150));
      await poll('small-b to be dropped for the total', 15_000, async () => {
        const names = teamSecrets(seen.at(-1));
        return JSON.stringify(names) === '["small-a"]' ? true : JSON.stringify(names);
      });
      expect(
        seen.at(-1)?.problems.find((p) => p.object === `Secret/${namespace}/small-b`)?.message,
      ).toContain('hold more than 300 bytes together');
    } finally {
      await source.stop();
    }
  });
});
