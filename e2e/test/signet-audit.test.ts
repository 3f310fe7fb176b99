import { join } from 'node:path';
import {
  craneEnv,
  ensureTools,
  pushRandomImage,
  type Registry,
  runCommand,
  startRegistry,
} from '@signet/testbed';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { parse } from 'yaml';
import { installPolicyReportCrds } from '../src/audit/policy-report-crds.ts';
import { runSignetCli } from '../src/audit/signet-cli.ts';
import { createNamespace, must, poll } from '../src/scenarios/kube.ts';
import { keyPolicy } from '../src/scenarios/policies.ts';
import { INCLUDE_LABEL } from '../src/scenarios/rollout.ts';
import {
  KEY_POLICY,
  type Preparation,
  type SignetEnvironment,
  startSignetEnvironment,
} from '../src/scenarios/signet-environment.ts';
import { workloadManifest } from '../src/scenarios/workloads.ts';
import { SIGNET_NAMESPACE, type SignetWebhook, startSignet } from '../src/signet-webhook.ts';

// `signet audit` and the server's background audit on the real control plane: workloads that pass,
// fail, warn and sit behind a dead registry; a namespace not yet opted in (preflight); a running
// Pod whose tag moved after it was pulled, judged by the digest in its status; reports that follow
// a policy change; two replicas behind one Lease publishing one set of reports. No webhook
// configuration is registered: every workload here is created freely, as in a cluster before
// Signet was installed (or before its namespace was labelled).

const log = (line: string) => process.stderr.write(`${line}\n`);

const WARN_POLICY = 'warn-only';
const DEAD_POLICY = 'dead-registry';
const OPTED_IN = 'audited';
const PREFLIGHT = 'preflight';

interface Finding {
  readonly image: string;
  readonly specImage?: string;
  readonly digest?: string;
  readonly policy: string;
  readonly result: string;
  readonly reason: string;
}

interface AuditedObject {
  readonly namespace: string;
  readonly kind: string;
  readonly name: string;
  readonly owner: { readonly kind: string; readonly name: string };
  readonly result: string;
  readonly findings: readonly Finding[];
}

interface AuditJson {
  readonly namespaces: readonly { name: string; optedIn: boolean }[];
  readonly objects: readonly AuditedObject[];
  readonly summary: Record<string, number>;
}

interface Report {
  readonly metadata: { namespace: string; labels: Record<string, string> };
  readonly summary: Record<string, number>;
  readonly results: readonly {
    policy: string;
    result: string;
    message: string;
    resources: { kind: string; name: string }[];
    properties: Record<string, string>;
  }[];
}

describe('Signet: audit of what runs', () => {
  let env: SignetEnvironment | undefined;
  let dead: Registry | undefined;
  const images = { warn: '', dead: '', movingTag: '' };
  const replicas: SignetWebhook[] = [];
  let failed = false;
  const environment = (): SignetEnvironment => {
    if (!env) throw new Error('the environment did not start');
    return env;
  };
  const insecure = () => [environment().images.registry.host, dead?.host ?? ''];
  const audit = (args: readonly string[]) =>
    runSignetCli(
      [
        'audit',
        `--kubeconfig=${environment().cluster.kubeconfig}`,
        `--signet-namespace=${SIGNET_NAMESPACE}`,
        '--timeout=10s',
        ...insecure().map((h) => `--insecure-registry=${h}`),
        ...args,
      ],
      { home: environment().cluster.runDir },
    );
  const auditJson = async (args: readonly string[] = []) => {
    const result = await audit(['-o', 'json', '-q', ...args]);
    return { ...result, report: JSON.parse(result.stdout) as AuditJson };
  };
  const objectOf = (report: AuditJson, namespace: string, kind: string, name: string) => {
    const found = report.objects.find((o) => o.namespace === namespace && o.kind === kind && o.name === name);
    if (!found) throw new Error(`no ${kind} ${namespace}/${name} in the audit`);
    return found;
  };

  async function prepare(ready: Omit<SignetEnvironment, 'signet'>): Promise<Preparation> {
    const { cluster, images: base, publicKeyPem } = ready;
    const [outage, { crane }] = await Promise.all([
      startRegistry({ referrers: false, group: cluster.group }),
      ensureTools(['crane']),
    ]);
    dead = outage;
    const push = async (registry: Pick<Registry, 'host' | 'url'>, repo: string, tag: string) =>
      `${registry.host}/${repo}@${await pushRandomImage(registry, repo, tag, { crane, workDir: cluster.runDir })}`;
    [images.warn, images.dead] = await Promise.all([
      push(base.registry, 'warn/app', 'v1'),
      push(outage, 'dead/app', 'v1'),
    ]);
    await base.cosign.signLegacyKeyed(images.dead, base.key);
    return {
      insecureRegistries: [outage.host],
      policies: [
        keyPolicy({
          name: WARN_POLICY,
          images: [`${base.registry.host}/warn/*`],
          publicKeyPem,
          mode: 'warn',
        }),
        keyPolicy({ name: DEAD_POLICY, images: [`${outage.host}/dead/*`], publicKeyPem }),
      ],
      policyNames: [WARN_POLICY, DEAD_POLICY],
    };
  }

  /** `crane copy SOURCE registry/app:moving`: the tag now names SOURCE's digest. */
  async function pointMovingTagAt(source: string): Promise<void> {
    const { crane } = await ensureTools(['crane']);
    const target = `${environment().images.registry.host}/app:moving`;
    await runCommand(crane, ['copy', '--insecure', source, target], {
      env: craneEnv(environment().cluster.runDir),
      timeoutMs: 60_000,
    });
  }

  beforeAll(async () => {
    env = await startSignetEnvironment({ onProgress: log, prepare });
    try {
      const { cluster, images: base } = env;
      await installPolicyReportCrds(cluster);
      await createNamespace(cluster, OPTED_IN, { [INCLUDE_LABEL]: 'true' });
      await createNamespace(cluster, PREFLIGHT);
      // `app:moving` names the unsigned image when the Pod below pulls it.
      await pointMovingTagAt(base.unsigned);
      images.movingTag = `${base.registry.host}/app:moving`;
      await cluster.apply([
        workloadManifest('Deployment', OPTED_IN, 'good', base.signed, { replicas: 2 }),
        workloadManifest('Deployment', OPTED_IN, 'bad', base.unsigned),
        workloadManifest('Deployment', OPTED_IN, 'warned', images.warn),
        workloadManifest('Pod', OPTED_IN, 'dead', images.dead),
        workloadManifest('Pod', OPTED_IN, 'moved', images.movingTag),
        workloadManifest('Deployment', PREFLIGHT, 'legacy', base.unsigned),
      ]);
      await poll('every Pod to run', 60_000, async () => {
        const pods = await cluster.getJson<{ items: { status?: { phase?: string } }[] }>([
          'pods',
          '-A',
          '-l',
          'app in (good,bad,warned,dead,moved,legacy)',
        ]);
        const running = pods.items.filter((p) => p.status?.phase === 'Running').length;
        return running === 7 ? true : `${running} of 7 running`;
      });
      // kwok plays the kubelet and reports no imageID: report the digest it "pulled", as a
      // kubelet would, through the status subresource. Then the tag moves to the signed image.
      must(
        await cluster.kubectl([
          'patch',
          'pod',
          'moved',
          '--namespace',
          OPTED_IN,
          '--subresource=status',
          '--type=json',
          '-p',
          JSON.stringify([
            {
              op: 'add',
              path: '/status/containerStatuses/0/imageID',
              value: `docker-pullable://${base.unsigned}`,
            },
          ]),
        ]),
      );
      await pointMovingTagAt(base.signed);
      // The dead registry's image was signed and pushed; now it cannot be reached.
      await dead?.process.stop();
    } catch (error) {
      failed = true;
      throw new Error(`${(error as Error).message}\n${await env.cluster.logTails(15)}`, { cause: error });
    }
  });

  afterAll(async () => {
    for (const replica of replicas) await replica.stop().catch(() => undefined);
    await env?.cluster.stop({ keepRunDir: failed });
  });

  const keepLogsOnFailure = () =>
    onTestFailed(() => {
      failed = true;
    });

  it('judges every workload and running Pod as if its namespace were opted in (JSON)', async () => {
    keepLogsOnFailure();
    const { code, report, stderr } = await auditJson();
    expect(stderr).toBe('');
    expect(code).toBe(1);
    const base = environment().images;
    expect(report.namespaces).toEqual(
      expect.arrayContaining([
        { name: OPTED_IN, optedIn: true },
        { name: PREFLIGHT, optedIn: false },
      ]),
    );
    expect(report.namespaces.map((n) => n.name)).not.toContain(SIGNET_NAMESPACE);
    expect(report.namespaces.map((n) => n.name)).not.toContain('kube-system');

    const good = objectOf(report, OPTED_IN, 'Deployment', 'good');
    expect(good.result).toBe('pass');
    expect(good.findings).toEqual([expect.objectContaining({ policy: KEY_POLICY, result: 'pass' })]);
    const goodPods = report.objects.filter((o) => o.kind === 'Pod' && o.owner.name === 'good');
    expect(goodPods).toHaveLength(2);
    expect(goodPods.every((p) => p.result === 'pass' && p.owner.kind === 'Deployment')).toBe(true);

    const bad = objectOf(report, OPTED_IN, 'Deployment', 'bad');
    expect(bad.result).toBe('fail');
    expect(bad.findings[0]).toMatchObject({ policy: KEY_POLICY, result: 'fail', image: base.unsigned });
    expect(bad.findings[0]?.reason).toMatch(/signature/);

    expect(objectOf(report, OPTED_IN, 'Deployment', 'warned')).toMatchObject({
      result: 'warn',
      findings: [expect.objectContaining({ policy: WARN_POLICY, result: 'warn' })],
    });
    // A registry that cannot be reached says nothing about compliance.
    const deadPod = objectOf(report, OPTED_IN, 'Pod', 'dead');
    expect(deadPod.result).toBe('infrastructure');
    expect(deadPod.findings[0]).toMatchObject({ policy: DEAD_POLICY, result: 'infrastructure' });

    // The tag now names a signed image; what runs is the unsigned digest the runtime pulled.
    const moved = objectOf(report, OPTED_IN, 'Pod', 'moved');
    expect(moved.result).toBe('fail');
    expect(moved.findings[0]).toMatchObject({
      image: `${base.registry.host}/app@${base.unsigned.split('@')[1]}`,
      specImage: images.movingTag,
      result: 'fail',
    });

    expect(objectOf(report, PREFLIGHT, 'Deployment', 'legacy').result).toBe('fail');
    // ReplicaSets are covered by their Deployment and Pods, not judged on their own.
    expect(report.objects.some((o) => o.kind === 'ReplicaSet')).toBe(false);
  });

  it('prints a table grouped by namespace and workload, with progress on stderr', async () => {
    keepLogsOnFailure();
    const { code, stdout, stderr } = await audit([]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^audit: \d+\/\d+ objects, \d+ images verified, \d+ cache hits$/m);
    const lines = stdout.split('\n');
    expect(lines).toContain(`NAMESPACE ${OPTED_IN} (opted in)`);
    expect(stdout).toContain(
      `NAMESPACE ${PREFLIGHT} (not opted in: what labelling it ${INCLUDE_LABEL}=true would do)`,
    );
    const row = (workload: string) => lines.find((l) => l.startsWith(workload)) ?? '';
    expect(row('Deployment/bad')).toMatch(
      new RegExp(`^Deployment/bad\\s+Deployment/bad\\s+\\S+\\s+${KEY_POLICY}\\s+fail\\s`),
    );
    expect(row('Deployment/good')).toMatch(/\bpass\b/);
    // The Deployment's two Pods share one line.
    expect(stdout).toMatch(/2 Pods \(good-/);
    expect(row('Pod/dead')).toMatch(/\binfrastructure\b/);
    expect(row('Pod/moved')).toContain(`(spec: ${images.movingTag})`);
    expect(lines.at(-3)).toBe('11 objects: 3 pass, 5 fail, 2 warn, 1 infrastructure (5 would be denied)');
    // The drain risk of the four workloads with a template (Pods alone are not recreated).
    expect(lines.at(-2)).toBe(
      'next Pod of 4 workloads (a drain, an eviction): 2 admitted, 0 only on a verification record, 2 denied',
    );
  });

  it('exits 0, 1, 3 and 2 as CI needs, and speaks YAML', async () => {
    keepLogsOnFailure();
    expect((await audit(['-q', '-n', OPTED_IN, '-l', 'app=good'])).code).toBe(0);
    expect((await audit(['-q', '-n', OPTED_IN, '-l', 'app=warned'])).code).toBe(0);
    expect((await audit(['-q', '-n', OPTED_IN, '-l', 'app=dead'])).code).toBe(3);
    const yaml = await audit(['-q', '-o', 'yaml', '--opted-in-only']);
    expect(yaml.code).toBe(1);
    const parsed = parse(yaml.stdout) as AuditJson;
    expect(parsed.namespaces.map((n) => n.name)).toEqual([OPTED_IN]);
    const usage = await audit(['--output=xml']);
    expect(usage.code).toBe(2);
    expect(usage.stderr.split('\n')[0]).toBe('signet audit: --output must be table, json or yaml, got "xml"');
  });

  it('audits manifests against policy files without reading the cluster', async () => {
    keepLogsOnFailure();
    const base = environment().images;
    const policy = keyPolicy({
      name: 'file-policy',
      images: [`${base.registry.host}/app*`],
      publicKeyPem: environment().publicKeyPem,
    });
    const dir = join(environment().cluster.runDir, 'audit-manifests');
    const { mkdir, writeFile } = await import('node:fs/promises');
    const { stringify } = await import('yaml');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'policy.yaml'), stringify(policy));
    await writeFile(
      join(dir, 'workloads.yaml'),
      [
        workloadManifest('Deployment', 'team', 'signed', base.signed),
        workloadManifest('Deployment', 'team', 'unsigned', base.unsigned),
      ]
        .map((o) => stringify(o))
        .join('---\n'),
    );
    const result = await runSignetCli(
      [
        'audit',
        '-q',
        '-o',
        'json',
        '-f',
        join(dir, 'workloads.yaml'),
        `--policy-file=${join(dir, 'policy.yaml')}`,
        `--insecure-registry=${base.registry.host}`,
      ],
      { home: environment().cluster.runDir },
    );
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as AuditJson;
    expect(report.namespaces).toEqual([]);
    expect(report.objects.map((o) => [o.name, o.result])).toEqual([
      ['signed', 'pass'],
      ['unsigned', 'fail'],
    ]);
  });

  describe('in the server: two replicas, one Lease, one set of reports', () => {
    const reports = async (): Promise<Report[]> =>
      (
        await environment().cluster.getJson<{ items: Report[] }>([
          'policyreports.wgpolicyk8s.io',
          '-A',
          '-l',
          'app.kubernetes.io/managed-by=signet',
        ])
      ).items;
    const reportOf = async (namespace: string) =>
      (await reports()).find((r) => r.metadata.namespace === namespace);
    const resultFor = (report: Report | undefined, workload: string) =>
      report?.results.find((r) => r.properties.workload === workload && r.policy !== '');
    const scansIn = async (replica: SignetWebhook) =>
      (await replica.process.logTail(10_000)).split('\n').filter((l) => l.includes('"audit scan finished"'))
        .length;
    const leaseHolder = async () =>
      (
        await environment().cluster.getJson<{ spec?: { holderIdentity?: string } }>([
          'lease',
          'signet-audit',
          '--namespace',
          SIGNET_NAMESPACE,
        ])
      ).spec?.holderIdentity ?? '';
    const nonCompliantEvents = async (name: string) =>
      (
        await environment().cluster.getJson<{ items: { reason: string; message: string }[] }>([
          'events',
          '--namespace',
          OPTED_IN,
          '--field-selector',
          `involvedObject.name=${name},reason=NonCompliantImage`,
        ])
      ).items;

    beforeAll(async () => {
      const { cluster } = environment();
      for (const identity of ['replica-a', 'replica-b'])
        replicas.push(
          await startSignet({
            cluster,
            insecureRegistries: insecure(),
            name: `signet-${identity}`,
            processName: `signet-${identity}`,
            extraArgs: [
              '--audit-interval=1h',
              '--audit-all-namespaces',
              `--audit-identity=${identity}`,
              '--shutdown-drain=0s',
            ],
          }),
        );
    });

    it('publishes one PolicyReport per namespace, preflight ones marked, from the Lease holder only', async () => {
      keepLogsOnFailure();
      await poll('reports of both namespaces', 90_000, async () => {
        const found = (await reports()).map((r) => r.metadata.namespace).sort();
        return found.includes(OPTED_IN) && found.includes(PREFLIGHT) ? true : `reports in [${found}]`;
      });
      const all = await reports();
      expect(all.filter((r) => r.metadata.namespace === OPTED_IN)).toHaveLength(1);
      const audited = await reportOf(OPTED_IN);
      expect(audited?.metadata.labels['signet.dev/preflight']).toBe('false');
      expect(resultFor(audited, 'Deployment/bad')).toMatchObject({ policy: KEY_POLICY, result: 'fail' });
      expect(resultFor(audited, 'Deployment/good')).toMatchObject({ result: 'pass' });
      expect(
        resultFor(audited, 'Deployment/good')
          ?.resources.map((r) => r.kind)
          .sort(),
      ).toEqual(['Deployment', 'Pod', 'Pod']);
      expect(resultFor(audited, 'Deployment/warned')).toMatchObject({ result: 'warn' });
      // The format's "error": could not be evaluated, not non-compliant.
      expect(resultFor(audited, 'Pod/dead')).toMatchObject({ policy: DEAD_POLICY, result: 'error' });
      expect(resultFor(audited, 'Pod/moved')?.properties.specImage).toBe(images.movingTag);
      expect(audited?.summary).toMatchObject({ fail: 2, warn: 1, error: 1 });
      const preflight = await reportOf(PREFLIGHT);
      expect(preflight?.metadata.labels['signet.dev/preflight']).toBe('true');
      expect(resultFor(preflight, 'Deployment/legacy')).toMatchObject({ result: 'fail' });

      const holder = await leaseHolder();
      expect(['replica-a', 'replica-b']).toContain(holder);
      const [leader, follower] = holder === 'replica-a' ? replicas : [...replicas].reverse();
      if (!leader || !follower) throw new Error('two replicas expected');
      expect(await scansIn(leader)).toBeGreaterThanOrEqual(1);
      expect(await scansIn(follower)).toBe(0);
      const metrics = await leader.metrics();
      expect(metrics).toMatch(
        new RegExp(
          `signet_audit_noncompliant_workloads\\{namespace="${OPTED_IN}",policy="${KEY_POLICY}"\\} 2\\b`,
        ),
      );
      expect(metrics).toMatch(/signet_audit_last_scan_timestamp_seconds \d/);
      expect(metrics).toMatch(/signet_audit_lease_held 1\b/);
      expect(await follower.metrics()).toMatch(/signet_audit_lease_held 0\b/);
      // One Event per newly failing workload, on the workload, in opted-in namespaces only.
      expect(await nonCompliantEvents('bad')).toHaveLength(1);
      expect(await nonCompliantEvents('moved')).toHaveLength(1);
      expect(await nonCompliantEvents('dead')).toHaveLength(0);
    });

    it('updates the reports when a policy changes, and a new leader takes over without repeating Events', async () => {
      keepLogsOnFailure();
      const { cluster, images: base, publicKeyPem } = environment();
      await cluster.apply(
        keyPolicy({ name: KEY_POLICY, images: [`${base.registry.host}/app*`], publicKeyPem, mode: 'warn' }),
      );
      await poll('the report to follow the policy change', 60_000, async () => {
        const result = resultFor(await reportOf(OPTED_IN), 'Deployment/bad')?.result;
        return result === 'warn' ? true : `Deployment/bad is ${result}`;
      });
      await cluster.apply(
        keyPolicy({ name: KEY_POLICY, images: [`${base.registry.host}/app*`], publicKeyPem }),
      );
      await poll('the report to follow the policy change back', 60_000, async () => {
        const result = resultFor(await reportOf(OPTED_IN), 'Deployment/bad')?.result;
        return result === 'fail' ? true : `Deployment/bad is ${result}`;
      });
      // The workload failed again after passing as a warning: that is newly failing.
      const eventsBefore = (await nonCompliantEvents('bad')).length;
      expect(eventsBefore).toBe(2);

      const holder = await leaseHolder();
      const [leader, follower] = holder === 'replica-a' ? replicas : [...replicas].reverse();
      if (!leader || !follower) throw new Error('two replicas expected');
      await leader.stop();
      await poll('the other replica to scan', 60_000, async () =>
        (await scansIn(follower)) > 0 ? true : `holder ${await leaseHolder()}`,
      );
      expect(await leaseHolder()).not.toBe(holder);
      expect(await nonCompliantEvents('bad')).toHaveLength(eventsBefore);
      expect((await reports()).filter((r) => r.metadata.namespace === OPTED_IN)).toHaveLength(1);
    });
  });
});
