// The webhook's Kubernetes integration against a real kube-apiserver: policy watches (with
// compile-and-swap and Events on bad policies), pull-secret and ServiceAccount reads, and
// self-managed TLS (CA and serving certificate in a Secret, caBundle patched, renewal).

import { X509Certificate } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import {
  ClusterPolicySource,
  compileSnapshot,
  createLogger,
  type KubeApi,
  KubePullSecretLookup,
  openKubeApi,
  PolicyEventRecorder,
  type PolicyObjects,
  SelfManagedTls,
  webhookConfigurations,
} from '@signet/webhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalCluster, startLocalCluster } from '../src/cluster/local-cluster.js';

const crds = new URL('../../apps/webhook/chart/files/crds/', import.meta.url);
let cluster: LocalCluster;
let api: KubeApi;
const logger = createLogger({ level: 'silent' });

async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  cluster = await startLocalCluster({
    onProgress: (p) => console.log(`cluster: ${p.message ?? JSON.stringify(p)}`),
  });
  api = openKubeApi({ kubeconfig: cluster.kubeconfig });
  for (const file of readdirSync(crds)) await cluster.apply(readFileSync(new URL(file, crds), 'utf8'));
  await cluster.kubectl([
    'wait',
    '--for=condition=Established',
    'crd/clusterimagepolicies.policy.sigstore.dev',
    'crd/trustroots.policy.sigstore.dev',
    '--timeout=30s',
  ]);
  await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'signet-system' } });
}, 600_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('policy watches', () => {
  it('delivers ClusterImagePolicies, TrustRoots, the config ConfigMap and Secrets, and follows changes', async () => {
    const seen: PolicyObjects[] = [];
    const source = new ClusterPolicySource({
      api,
      namespace: 'signet-system',
      logger,
      onChange: (o) => seen.push(o),
      debounceMs: 50,
    });
    await cluster.apply(`
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: first }
spec:
  images: [{ glob: "registry.example/**" }]
  authorities: [{ static: { action: pass } }]
---
apiVersion: v1
kind: ConfigMap
metadata: { name: config-policy-controller, namespace: signet-system }
data: { no-match-policy: warn }
---
apiVersion: v1
kind: Secret
metadata: { name: cosign-pub, namespace: signet-system }
stringData: { cosign.pub: "not a key" }
`);
    await source.start();
    await source.synced;
    try {
      const first = seen.at(-1);
      expect(first?.policies.map((p) => p.metadata.name)).toEqual(['first']);
      expect(first?.config.noMatchPolicy).toBe('warn');
      expect(first?.secrets.map((s) => s.name)).toContain('cosign-pub');
      // v1alpha1 objects are served as v1beta1 by the CRD and seen by the same watch
      await cluster.apply(`
apiVersion: policy.sigstore.dev/v1alpha1
kind: ClusterImagePolicy
metadata: { name: second }
spec:
  images: [{ glob: "**" }]
  authorities: [{ static: { action: fail } }]
`);
      const both = await eventually('the second policy', async () => {
        const names = seen.at(-1)?.policies.map((p) => p.metadata.name);
        return names?.includes('second') ? names : undefined;
      });
      expect(both.sort()).toEqual(['first', 'second']);
      await cluster.kubectl(['delete', 'clusterimagepolicy', 'first']);
      await eventually('the deletion', async () => (seen.at(-1)?.policies.length === 1 ? true : undefined));
    } finally {
      await source.stop();
      await cluster.kubectl(['delete', 'clusterimagepolicy', '--all']);
    }
  });

  it('reports a policy that cannot be enforced as a Kubernetes Event on it', async () => {
    await cluster.apply(`
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: rego-policy }
spec:
  images: [{ glob: "**" }]
  authorities:
    - static: { action: pass }
      attestations: [{ name: vuln, predicateType: vuln, policy: { type: rego, data: "package x" } }]
`);
    const events = new PolicyEventRecorder(api, logger);
    let objects: PolicyObjects | undefined;
    const source = new ClusterPolicySource({
      api,
      namespace: 'signet-system',
      logger,
      onChange: (o) => (objects = o),
    });
    await source.start();
    await source.synced;
    await source.stop();
    const { snapshot, problems } = await compileSnapshot(objects as PolicyObjects, {
      namespace: 'signet-system',
    });
    expect(snapshot?.broken.has('rego-policy')).toBe(true);
    const problem = problems.find((p) => p.object === 'ClusterImagePolicy/rego-policy');
    expect(problem?.message).toMatch(/rego/i);
    expect(problem?.ref).toEqual({
      apiVersion: 'policy.sigstore.dev/v1beta1',
      kind: 'ClusterImagePolicy',
      name: 'rego-policy',
    });
    await events.warn(
      problem?.ref ?? { apiVersion: '', kind: '', name: '' },
      'InvalidPolicy',
      problem?.message ?? '',
    );
    const listed = await cluster.getJson<{
      items: { reason: string; message: string; involvedObject: { name: string } }[];
    }>(['events', '-n', 'default', '--field-selector', 'involvedObject.name=rego-policy']);
    expect(listed.items.map((e) => e.reason)).toEqual(['InvalidPolicy']);
    expect(listed.items[0]?.message).toMatch(/rego/i);
    await cluster.kubectl(['delete', 'clusterimagepolicy', 'rego-policy']);
  });
});

describe('pull secrets', () => {
  it('reads a workload namespace pull secret and its ServiceAccount with get', async () => {
    const config = Buffer.from(
      JSON.stringify({ auths: { 'registry.example': { auth: Buffer.from('u:p').toString('base64') } } }),
    ).toString('base64');
    await cluster.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'pull', namespace: 'apps' },
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': config },
      },
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'builder', namespace: 'apps' },
        imagePullSecrets: [{ name: 'pull' }],
      },
    ]);
    const lookup = new KubePullSecretLookup(api);
    expect(await lookup.serviceAccountPullSecrets('apps', 'builder')).toEqual(['pull']);
    expect(await lookup.serviceAccountPullSecrets('apps', 'missing')).toEqual([]);
    expect((await lookup.secret('apps', 'pull'))?.type).toBe('kubernetes.io/dockerconfigjson');
    expect(await lookup.secret('apps', 'absent')).toBeUndefined();
  });
});

describe('self-managed TLS', () => {
  it('issues a CA and serving certificate into a Secret and patches the caBundle; a second replica reuses them; renewal keeps the old CA in the bundle', async () => {
    await cluster.apply(
      webhookConfigurations({
        name: 'signet',
        endpoint: { service: { namespace: 'signet-system', name: 'signet-webhook' } },
        namespace: 'signet-system',
      }),
    );
    const options = {
      api,
      logger,
      namespace: 'signet-system',
      secretName: 'signet-webhook-tls',
      serviceName: 'signet-webhook',
      webhookName: 'signet',
    };
    const served: string[] = [];
    const first = new SelfManagedTls({ ...options, onCertificate: (pair) => served.push(pair.cert) });
    const pair = await first.start();
    first.stop();
    const cert = new X509Certificate(pair.cert);
    expect(cert.subjectAltName).toContain('DNS:signet-webhook.signet-system.svc');
    const secret = await cluster.getJson<{ data: Record<string, string> }>([
      'secret',
      '-n',
      'signet-system',
      'signet-webhook-tls',
    ]);
    const ca = Buffer.from(secret.data['ca.crt'] ?? '', 'base64').toString();
    expect(cert.verify(new X509Certificate(ca).publicKey)).toBe(true);
    for (const kind of ['validatingwebhookconfiguration', 'mutatingwebhookconfiguration']) {
      const config = await cluster.getJson<{ webhooks: { clientConfig: { caBundle: string } }[] }>([
        kind,
        'signet',
      ]);
      expect(Buffer.from(config.webhooks[0]?.clientConfig.caBundle ?? '', 'base64').toString()).toBe(ca);
    }
    const second = new SelfManagedTls({ ...options, onCertificate: () => undefined });
    expect((await second.start()).cert).toBe(pair.cert);
    second.stop();
    // Four years on, the CA (5 years) is past two thirds of its life: a new CA, and the bundle keeps both.
    const later = new SelfManagedTls({
      ...options,
      onCertificate: () => undefined,
      now: () => new Date(Date.now() + 4 * 365 * 86_400_000),
    });
    const renewed = await later.reconcile();
    later.stop();
    expect(renewed.serving.cert).not.toBe(pair.cert);
    expect(renewed.bundle).toContain(ca.trim());
    expect(renewed.bundle).toContain(renewed.ca.cert.trim());
    const config = await cluster.getJson<{ webhooks: { clientConfig: { caBundle: string } }[] }>([
      'validatingwebhookconfiguration',
      'signet',
    ]);
    expect(Buffer.from(config.webhooks[0]?.clientConfig.caBundle ?? '', 'base64').toString()).toBe(
      renewed.bundle,
    );
  });
});

/** etcd's JSON gateway (the API server is down, etcd is not). */
async function etcd<T>(path: string, body: object): Promise<T> {
  const response = await fetch(`${cluster.etcdUrl}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`etcd ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

describe('policy watches across an API server restart (the last test: it restarts the API server)', () => {
  it('a policy changed while the API server is down, with etcd compacted past what Signet saw, reaches the snapshot (410, list again)', async () => {
    await cluster.apply(`
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: moving }
spec:
  images: [{ glob: "registry.example/before/**" }]
  authorities: [{ static: { action: pass } }]
`);
    const seen: PolicyObjects[] = [];
    const source = new ClusterPolicySource({
      api,
      namespace: 'signet-system',
      logger,
      onChange: (o) => seen.push(o),
      debounceMs: 50,
    });
    const globOf = (objects: PolicyObjects | undefined) =>
      JSON.stringify(objects?.policies.find((p) => p.metadata.name === 'moving')?.spec.images);
    await source.start();
    await source.synced;
    try {
      expect(globOf(seen.at(-1))).toContain('registry.example/before/**');
      const key = Buffer.from('/registry/policy.sigstore.dev/clusterimagepolicies/moving').toString('base64');
      await cluster.restartApiServer(async () => {
        // While it is down, the policy changes (as another API server of an HA control plane would
        // write it: custom resources are stored as JSON), and etcd forgets the history before.
        const read = await etcd<{ kvs: { value: string }[] }>('/v3/kv/range', { key });
        const stored = JSON.parse(Buffer.from(read.kvs[0]?.value ?? '', 'base64').toString('utf8'));
        stored.spec.images = [{ glob: 'registry.example/after/**' }];
        const value = Buffer.from(JSON.stringify(stored)).toString('base64');
        const put = await etcd<{ header: { revision: string } }>('/v3/kv/put', { key, value });
        await etcd('/v3/kv/compaction', { revision: put.header.revision, physical: true });
      });
      // Signet's watch broke; it watches again from the resourceVersion it saw, which the new API
      // server (and etcd) no longer have: 410, a new list, the change.
      await eventually(
        'the change made while the API server was down',
        async () => (globOf(seen.at(-1)).includes('registry.example/after/**') ? true : undefined),
        60_000,
      );
    } finally {
      await source.stop();
    }
  });
});
