// The kubeconfigs users have, against a real kube-apiserver: `signet audit` and `signet migrate
// check` (the commands run before adopting Signet) authenticate through an `exec` credential
// plugin, as EKS (`aws eks get-token`), GKE, AKS and OIDC logins do, and through a client
// certificate. The plugin is a script printing an ExecCredential with a token the API server
// knows from its --token-auth-file; the certificate is signed by the CA of its --client-ca-file.
// A plugin printing a wrong token is refused by the API server: the token is what authenticates.
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSignetCli } from '../src/audit/signet-cli.ts';
import { writeKubeconfig } from '../src/cluster/kubeconfig.ts';
import { type LocalCluster, startLocalCluster } from '../src/cluster/local-cluster.ts';
import { IDENTITIES, issueClientCertificate } from '../src/cluster/pki.ts';
import { createNamespace, installPolicyCrds } from '../src/scenarios/kube.ts';

let cluster: LocalCluster;
const kubeconfigs: Record<'exec' | 'certificate' | 'wrongToken', string> = {
  exec: '',
  certificate: '',
  wrongToken: '',
};
let pluginRuns = '';

/** A credential plugin: a script that notes each run and prints an ExecCredential with `token`. */
async function credentialPlugin(name: string, token: string): Promise<string> {
  const script = join(cluster.runDir, `${name}.sh`);
  await writeFile(
    script,
    [
      '#!/bin/sh',
      `echo run >> '${pluginRuns}'`,
      `echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${token}"}}'`,
      '',
    ].join('\n'),
  );
  await chmod(script, 0o700);
  return script;
}

function execUser(command: string) {
  return { exec: { apiVersion: 'client.authentication.k8s.io/v1', command, interactiveMode: 'Never' } };
}

beforeAll(async () => {
  cluster = await startLocalCluster({
    onProgress: (p) => console.log(`cluster: ${p.message ?? JSON.stringify(p)}`),
  });
  pluginRuns = join(cluster.runDir, 'plugin-runs');
  await installPolicyCrds(cluster);
  await createNamespace(cluster, 'signet-system');
  await createNamespace(cluster, 'apps', { 'policy.sigstore.dev/include': 'true' });
  await cluster.apply([
    {
      apiVersion: 'policy.sigstore.dev/v1beta1',
      kind: 'ClusterImagePolicy',
      metadata: { name: 'everything-passes' },
      spec: { images: [{ glob: 'registry.example/**' }], authorities: [{ static: { action: 'pass' } }] },
    },
    {
      // Suspended: no Job, no Pod; the audit judges it as a CREATE, and no registry is asked.
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly', namespace: 'apps' },
      spec: {
        schedule: '0 3 * * *',
        suspend: true,
        jobTemplate: {
          spec: {
            template: {
              spec: {
                restartPolicy: 'Never',
                containers: [{ name: 'job', image: `registry.example/job@sha256:${'a'.repeat(64)}` }],
              },
            },
          },
        },
      },
    },
  ]);
  const common = { server: cluster.apiServerUrl, caPem: cluster.caPem };
  kubeconfigs.exec = await writeKubeconfig(join(cluster.runDir, 'exec.kubeconfig'), {
    ...common,
    user: IDENTITIES.execPlugin.user,
    credentials: execUser(await credentialPlugin('credential-plugin', cluster.pki.tokens.execPlugin)),
  });
  kubeconfigs.wrongToken = await writeKubeconfig(join(cluster.runDir, 'wrong-token.kubeconfig'), {
    ...common,
    user: 'someone',
    credentials: execUser(await credentialPlugin('wrong-plugin', 'not-a-token-the-api-server-knows')),
  });
  const certificate = await issueClientCertificate(cluster.pki, cluster.runDir, 'signet-e2e-cert', [
    'system:masters',
  ]);
  kubeconfigs.certificate = await writeKubeconfig(join(cluster.runDir, 'certificate.kubeconfig'), {
    ...common,
    user: 'signet-e2e-cert',
    credentials: { 'client-certificate': certificate.certFile, 'client-key': certificate.keyFile },
  });
}, 600_000);

afterAll(async () => {
  await cluster?.stop();
});

const cli = (args: readonly string[]) => runSignetCli(args, { home: cluster.runDir, timeoutMs: 120_000 });

interface Report {
  readonly namespaces: readonly { name: string; optedIn: boolean }[];
  readonly objects: readonly { kind: string; name: string; result: string }[];
}

describe.each([
  ['an exec credential plugin', 'exec'],
  ['a client certificate', 'certificate'],
] as const)('a kubeconfig whose user authenticates with %s', (_, which) => {
  it('signet audit reads the workloads and the policies', async () => {
    const runsBefore = (await readFile(pluginRuns, 'utf8').catch(() => '')).length;
    const result = await cli([
      'audit',
      `--kubeconfig=${kubeconfigs[which]}`,
      '-n',
      'apps',
      '-o',
      'json',
      '-q',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.namespaces).toEqual([{ name: 'apps', optedIn: true }]);
    expect(report.objects.map((o) => [o.kind, o.name, o.result])).toEqual([['CronJob', 'nightly', 'pass']]);
    const ran = (await readFile(pluginRuns, 'utf8').catch(() => '')).length > runsBefore;
    expect(ran).toBe(which === 'exec');
  });

  it('signet migrate check reads the CRDs, webhooks, policies and Secrets', async () => {
    const result = await cli(['migrate', 'check', `--kubeconfig=${kubeconfigs[which]}`, '--output', 'json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const { findings } = JSON.parse(result.stdout) as { findings: { subject: string; severity: string }[] };
    // The CRDs (applied with kubectl, not by a Helm release) and the policy, compiled, were read.
    expect(findings.map((f) => `${f.severity} ${f.subject}`)).toEqual(
      expect.arrayContaining([
        'warning crd/clusterimagepolicies.policy.sigstore.dev',
        'warning crd/trustroots.policy.sigstore.dev',
        'ok clusterimagepolicy/everything-passes',
      ]),
    );
  });
});

it('a plugin whose token the API server does not know: refused, said in one line (exit 2)', async () => {
  const audit = await cli(['audit', `--kubeconfig=${kubeconfigs.wrongToken}`, '-n', 'apps', '-q']);
  expect(audit.code).toBe(2);
  expect(audit.stderr).toMatch(
    /^signet audit: cannot read the policies: \w+: 401 Unauthorized: Unauthorized\n$/,
  );
  const migrate = await cli(['migrate', 'check', `--kubeconfig=${kubeconfigs.wrongToken}`]);
  expect(migrate.code).toBe(2);
  expect(migrate.stderr).toMatch(
    /^signet migrate: cannot read the cluster: GET \S+: 401 Unauthorized: Unauthorized\n$/,
  );
});
