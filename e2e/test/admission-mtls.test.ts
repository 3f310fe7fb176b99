// Issue 21, Deliver item 1: the admission port knows its caller. kube-apiserver is started with an
// AdmissionConfiguration whose WebhookAdmission kubeconfig names Signet's address and carries a
// client certificate; Signet runs with `--client-ca-file` (a certificate required). Then:
//   (a) reviews from the API server pass: a Pod CREATE goes through /mutate and /validate and is
//       admitted by policy, and Signet counts those connections as verified;
//   (b) a client without the certificate (any Pod that can reach the port) is refused during TLS
//       with TLS's "certificate required" alert, before a byte of HTTP; one with a certificate from
//       another CA is closed at the end of the handshake.
// The kubeconfig matches the webhook by host:port (the URL Signet is registered with); in a
// cluster it is the Service's name, `signet-webhook.signet-system.svc` (see docs/operations.md).
import { writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { createRunDir, freePort } from '@signet/testbed';
import { createCertificateAuthority, type IssuedCertificate, issueClientCertificate } from '@signet/webhook';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { stringify } from 'yaml';
import { type LocalCluster, startLocalCluster } from '../src/cluster/index.ts';
import { createNamespace, installPolicyCrds, must, poll } from '../src/scenarios/kube.ts';
import { INCLUDE_LABEL } from '../src/scenarios/rollout.ts';
import { SIGNET_NAMESPACE, type SignetWebhook, startSignet } from '../src/signet-webhook.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);
const NAMESPACE = 'mtls';
const IMAGE = `mtls.example/app@sha256:${'c'.repeat(64)}`;

let cluster: LocalCluster | undefined;
let signet: SignetWebhook | undefined;
let clientCa: IssuedCertificate;
let failed = false;

const running = (): { cluster: LocalCluster; signet: SignetWebhook } => {
  if (!cluster || !signet) throw new Error('the cluster or Signet did not start');
  return { cluster, signet };
};

/** The kubeconfig kube-apiserver reads for its webhook calls: a user per webhook address. */
function webhookKubeconfig(address: string, client: IssuedCertificate): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    users: [
      {
        name: address,
        user: {
          'client-certificate-data': Buffer.from(client.cert).toString('base64'),
          'client-key-data': Buffer.from(client.key).toString('base64'),
        },
      },
    ],
  });
}

/** `--admission-control-config-file`: both webhook plugins read `kubeconfig`. */
function admissionConfiguration(kubeconfig: string): string {
  const plugin = (name: string) => ({
    name,
    configuration: {
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'WebhookAdmissionConfiguration',
      kubeConfigFile: kubeconfig,
    },
  });
  return stringify({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AdmissionConfiguration',
    plugins: [plugin('ValidatingAdmissionWebhook'), plugin('MutatingAdmissionWebhook')],
  });
}

beforeAll(async () => {
  const dir = await createRunDir('signet-e2e-mtls-');
  clientCa = await createCertificateAuthority('kube-apiserver-webhook-client-ca', 1);
  const apiServerClient = await issueClientCertificate(clientCa, 'kube-apiserver', 1);
  // The address is known before either starts: the API server reads its kubeconfig once.
  const port = await freePort();
  const files = {
    kubeconfig: join(dir, 'webhook-kubeconfig.yaml'),
    admission: join(dir, 'admission-configuration.yaml'),
    clientCa: join(dir, 'client-ca.crt'),
  };
  await writeFile(files.kubeconfig, webhookKubeconfig(`127.0.0.1:${port}`, apiServerClient), { mode: 0o600 });
  await writeFile(files.admission, admissionConfiguration(files.kubeconfig));
  await writeFile(files.clientCa, clientCa.cert);
  cluster = await startLocalCluster({
    onProgress: (event) => log(`cluster ${event.line}`),
    apiServerArgs: [`--admission-control-config-file=${files.admission}`],
  });
  await installPolicyCrds(cluster);
  await createNamespace(cluster, SIGNET_NAMESPACE);
  await createNamespace(cluster, NAMESPACE, { [INCLUDE_LABEL]: 'true' });
  signet = await startSignet({
    cluster,
    insecureRegistries: [],
    port,
    extraArgs: [`--client-ca-file=${files.clientCa}`],
  });
  await cluster.apply({
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name: 'mtls' },
    spec: { images: [{ glob: 'mtls.example/**' }], authorities: [{ static: { action: 'pass' } }] },
  });
  await signet.waitForPolicies(['mtls']);
  await cluster.apply(signet.configurations());
}, 600_000);

beforeEach(() => {
  onTestFailed(() => {
    failed = true;
  });
});

afterAll(async () => {
  await signet?.stop();
  if (failed && cluster) log(await cluster.logTails(40));
  await cluster?.stop(failed ? { keepRunDir: true } : {});
});

async function metric(pattern: RegExp): Promise<number> {
  const match = pattern.exec(await running().signet.metrics());
  return match ? Number(match[1]) : 0;
}

describe('mutual TLS between kube-apiserver and Signet', () => {
  it('(a) the API server presents its client certificate and its reviews pass', async () => {
    const { cluster } = running();
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'app', namespace: NAMESPACE },
      spec: { containers: [{ name: 'app', image: IMAGE }] },
    };
    // Webhook configurations take a moment to reach the API server's admission chain.
    await poll('the Pod to be admitted through Signet', 30_000, async () => {
      const result = await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(pod) });
      if (result.exitCode !== 0) return result.stderr.trim();
      const admissions = await running().signet.admissions();
      return admissions.some((a) => a.endpoint === 'validate' && a.name === 'app' && a.decision === 'allowed')
        ? true
        : 'not reviewed by Signet yet';
    });
    must(await cluster.kubectl(['get', 'pod', 'app', '--namespace', NAMESPACE]));
    expect(await metric(/^signet_admission_connections_total\{client="verified"\} (\d+)/m)).toBeGreaterThan(
      0,
    );
    expect(await metric(/^signet_admission_connections_total\{client="anonymous"\} (\d+)/m)).toBe(0);
  });

  it('(b) a client without the certificate is refused during TLS, before any HTTP', async () => {
    const { signet } = running();
    const before = await metric(
      /^signet_admission_connections_refused_total\{reason="client-certificate"\} (\d+)/m,
    );
    const outcome = await new Promise<string>((resolve) => {
      const req = request(
        `${signet.url}/validate`,
        { method: 'POST', ca: signet.caPem, agent: false },
        (res) => resolve(`answered ${res.statusCode}`),
      );
      req.on('error', (error: NodeJS.ErrnoException) => resolve(`refused: ${error.code ?? error.message}`));
      req.end('{}');
    });
    log(`a client without a certificate: ${outcome}`);
    // TLS's own alert: what the API server logs when its kubeconfig names no certificate.
    expect(outcome).toBe('refused: ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
    expect(
      await metric(/^signet_admission_connections_refused_total\{reason="client-certificate"\} (\d+)/m),
    ).toBe(before + 1);
    // A certificate from another CA fares no better.
    const impostorCa = await createCertificateAuthority('someone-else', 1);
    const impostor = await issueClientCertificate(impostorCa, 'kube-apiserver', 1);
    const withImpostor = await new Promise<string>((resolve) => {
      const req = request(
        `${signet.url}/validate`,
        { method: 'POST', ca: signet.caPem, agent: false, cert: impostor.cert, key: impostor.key },
        (res) => resolve(`answered ${res.statusCode}`),
      );
      req.on('error', (error: NodeJS.ErrnoException) => resolve(`refused: ${error.code ?? error.message}`));
      req.end('{}');
    });
    expect(withImpostor).toMatch(/^refused: /);
  });
});
