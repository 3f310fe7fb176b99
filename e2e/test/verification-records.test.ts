// Verification records on a real API server (issue 24): two Signet processes (the built CLI with
// --verification-records) share passes through VerificationRecord objects, a restarted one too,
// and during a registry outage (a proxy answering 429 in front of a real registry, cosign-signed
// images) the Pods a ReplicaSet recreates are admitted on their records, with an Event on the
// ReplicaSet; a forged record is ignored and counted; the collector removes what is expired, over
// the limit or not Signet's. Real Pods on real nodes, with drains, are the kind suite's.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  createLogger,
  openKubeApi,
  RecordCollector,
  RecordKey,
  RecordMetrics,
  RecordStore,
  recordName,
  SignetMetrics,
  signedRecord,
} from '@signet/webhook';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { type LocalCluster, startLocalCluster } from '../src/cluster/index.ts';
import { installVerificationRecordsCrd } from '../src/records/records-crd.ts';
import { type RegistryProxy, startRegistryProxy } from '../src/records/registry-proxy.ts';
import { createNamespace, installPolicyCrds, must, poll } from '../src/scenarios/kube.ts';
import { keyPolicy } from '../src/scenarios/policies.ts';
import { prepareTestImages, type TestImages } from '../src/scenarios/test-images.ts';
import { SIGNET_NAMESPACE, type SignetWebhook, startSignet } from '../src/signet-webhook.ts';
import { podCreateReview, sendReview } from '../src/webhooks/admission-client.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);
const KEY_SECRET = 'signet-webhook-records-key';
/** Short, so that the records are older than it (stale-if-error) within the test. */
const CACHE_TTL_S = 20;
const APPS = 'apps';

let cluster: LocalCluster | undefined;
let images: TestImages;
let proxy: RegistryProxy;
let signed = '';
let unsigned = '';
let failed = false;
const signets: Record<string, SignetWebhook> = {};
const running = (): LocalCluster => {
  if (!cluster) throw new Error('the cluster did not start');
  return cluster;
};
const replica = (name: string): SignetWebhook => {
  const signet = signets[name];
  if (!signet) throw new Error(`Signet ${name} is not running`);
  return signet;
};

const start = async (name: string) => {
  signets[name] = await startSignet({
    cluster: running(),
    insecureRegistries: [proxy.host],
    cacheTtl: `${CACHE_TTL_S}s`,
    processName: name,
    extraArgs: ['--verification-records'],
  });
  await replica(name).waitForPolicies(['release']);
};

async function metric(signet: SignetWebhook, pattern: RegExp): Promise<number> {
  const match = pattern.exec(await signet.metrics());
  return match ? Number(match[1]) : 0;
}

interface RecordItem {
  metadata: { name: string; creationTimestamp: string };
  spec: {
    image: string;
    policy: string;
    fingerprint: string;
    verifiedAt: string;
    verifiedBy: string;
    hmac: string;
  };
}
const records = async () =>
  (await running().getJson<{ items: RecordItem[] }>(['verificationrecords', '-n', SIGNET_NAMESPACE])).items;

const review = (signet: SignetWebhook, image: string, name = `p-${Date.now()}`) =>
  sendReview(signet.url, '/validate', signet.caPem, podCreateReview(APPS, name, image));

beforeAll(async () => {
  cluster = await startLocalCluster({ onProgress: (event) => log(`cluster ${event.line}`) });
  images = await prepareTestImages({ group: cluster.group, workDir: cluster.runDir, onProgress: log });
  proxy = await startRegistryProxy(images.registry.host);
  signed = images.signed.replace(images.registry.host, proxy.host);
  unsigned = images.unsigned.replace(images.registry.host, proxy.host);
  await installPolicyCrds(cluster);
  await installVerificationRecordsCrd(cluster);
  await createNamespace(cluster, SIGNET_NAMESPACE);
  await createNamespace(cluster, APPS, { 'policy.sigstore.dev/include': 'true' });
  const publicKeyPem = await readFile(images.key.publicKey, 'utf8');
  await cluster.apply(keyPolicy({ name: 'release', images: [`${proxy.host}/app*`], publicKeyPem }));
  await Promise.all([start('signet-a'), start('signet-b')]);
}, 600_000);

beforeEach(() => {
  proxy.mode = 'forward';
  onTestFailed(() => {
    failed = true;
  });
});

afterAll(async () => {
  for (const signet of Object.values(signets)) await signet.stop();
  await proxy?.close();
  if (failed && cluster) log(await cluster.logTails(40));
  await cluster?.stop(failed ? { keepRunDir: true } : {});
});

describe('verification records shared by replicas', () => {
  it('a pass is recorded once, visible with kubectl get, under an HMAC key in a Secret Signet created', async () => {
    expect((await review(replica('signet-a'), signed)).allowed).toBe(true);
    await poll('the record to be written', 15_000, async () =>
      (await records()).length === 1 ? true : 'none yet',
    );
    const [record] = await records();
    expect(record?.spec).toMatchObject({ image: signed, policy: 'release', verifiedBy: expect.any(String) });
    expect(record?.spec.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(record?.spec.hmac).toMatch(/^[0-9a-f]{64}$/);
    const table = must(await running().kubectl(['get', 'verificationrecords', '-n', SIGNET_NAMESPACE]));
    expect(table.stdout).toMatch(/^NAME\s+POLICY\s+IMAGE\s+VERIFIED\s+BY/);
    expect(table.stdout).toContain(signed);
    // One key for both replicas, made by whichever came first; never in a log.
    const secret = await running().getJson<{ data: Record<string, string> }>([
      'secret',
      KEY_SECRET,
      '-n',
      SIGNET_NAMESPACE,
    ]);
    const key = secret.data['hmac-key'] ?? '';
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    for (const signet of Object.values(signets)) {
      const text = await readFile(signet.logFile, 'utf8');
      expect(text).toContain('verification records key loaded');
      expect(text).not.toContain(key);
      expect(text).not.toContain(Buffer.from(key, 'base64').toString('hex'));
    }
    log(`records: ${table.stdout.trim()}`);
  });

  it('another replica admits the digest without asking the registry', async () => {
    const before = proxy.requests.length;
    const answer = await review(replica('signet-b'), signed);
    expect(answer.allowed).toBe(true);
    expect(proxy.requests.slice(before), 'registry requests of the second replica').toEqual([]);
    expect(
      await metric(replica('signet-b'), /^signet_verification_record_lookups_total\{result="hit"\} (\d+)/m),
    ).toBe(1);
  });

  it('so does a restarted replica (an empty memory cache)', async () => {
    await replica('signet-a').stop();
    await start('signet-a');
    const before = proxy.requests.length;
    expect((await review(replica('signet-a'), signed)).allowed).toBe(true);
    expect(proxy.requests.slice(before)).toEqual([]);
  });

  it('a record someone else wrote is ignored and counted, and admits nothing during an outage', async () => {
    const fingerprint = (await records())[0]?.spec.fingerprint ?? '';
    const forged = signedRecord(randomBytes(32), SIGNET_NAMESPACE, {
      image: unsigned,
      policy: 'release',
      fingerprint,
      signers: [],
      verifiedAt: Date.now(),
      verifiedBy: 'signet-a',
    });
    expect((forged.metadata as { name: string }).name).toBe(recordName('release', fingerprint, unsigned));
    await running().apply(forged);
    for (const signet of Object.values(signets)) {
      await poll('the forged record to be counted', 15_000, async () =>
        (await metric(signet, /^signet_verification_records_rejected_total\{reason="hmac"\} (\d+)/m)) >= 1
          ? true
          : 'not counted',
      );
    }
    proxy.mode = '429';
    const answer = await review(replica('signet-b'), unsigned);
    expect(answer.allowed).toBe(false);
    expect(answer.message).toContain('infrastructure failure');
  });
});

describe('stale-if-error during a registry outage', () => {
  it("the ReplicaSet's replacement Pods are admitted on their records, with an Event on the ReplicaSet", async () => {
    await running().apply(replica('signet-b').configurations());
    await running().apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: APPS },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image: signed }] },
        },
      },
    });
    must(await running().kubectl(['rollout', 'status', 'deployment/web', '-n', APPS, '--timeout=60s']));
    // Past the cache TTL: no replica may reuse the pass as is; only stale-if-error admits now.
    await poll('the record to be older than the cache TTL', 60_000, async () => {
      const record = (await records()).find((r) => r.spec.image === signed);
      const age = Date.now() - Date.parse(record?.spec.verifiedAt ?? '');
      return age > (CACHE_TTL_S + 2) * 1000 ? true : `${Math.round(age / 1000)}s old`;
    });
    proxy.mode = '429';
    must(await running().kubectl(['delete', 'pods', '-l', 'app=web', '-n', APPS, '--wait=false']));
    await poll('two new Pods of web', 60_000, async () => {
      const pods = await running().getJson<{ items: { metadata: { deletionTimestamp?: string } }[] }>([
        'pods',
        '-n',
        APPS,
        '-l',
        'app=web',
      ]);
      const live = pods.items.filter((p) => !p.metadata.deletionTimestamp).length;
      return live === 2 ? true : `${live} live`;
    });
    const events = await running().getJson<{
      items: { reason: string; message: string; involvedObject: { kind: string; name: string } }[];
    }>(['events', '-n', APPS, '--field-selector', 'reason=AdmittedOnVerificationRecord']);
    expect(events.items.length).toBeGreaterThanOrEqual(1);
    expect(events.items[0]?.involvedObject.kind).toBe('ReplicaSet');
    expect(events.items[0]?.message).toMatch(
      /admitted on the verification record of .* for policy "release", \d+s old \(stale-if-error\)/,
    );
    expect(
      await metric(replica('signet-b'), /^signet_stale_if_error_admissions_total\{policy="release"\} (\d+)/m),
    ).toBeGreaterThanOrEqual(1);
    const admitted = (await replica('signet-b').admissions()).filter((a) => a.decision === 'warned');
    expect(admitted.some((a) => String(a.user).startsWith('system:serviceaccount:kube-system:'))).toBe(true);
    log(`stale-if-error: ${events.items[0]?.message}`);
  });

  it('with the grace period 0 (the policy annotation) the same digest is denied', async () => {
    proxy.mode = '429';
    must(
      await running().kubectl([
        'annotate',
        'clusterimagepolicy',
        'release',
        'signet.dev/stale-if-error=0',
        '--overwrite',
      ]),
    );
    try {
      await poll('the annotation to turn stale-if-error off', 30_000, async () => {
        const answer = await review(replica('signet-b'), signed);
        return answer.allowed ? 'still admitted' : true;
      });
      expect(
        await metric(replica('signet-b'), /^signet_stale_if_error_refusals_total\{refusal="off"\} (\d+)/m),
      ).toBeGreaterThanOrEqual(1);
    } finally {
      must(
        await running().kubectl(['annotate', 'clusterimagepolicy', 'release', 'signet.dev/stale-if-error-']),
      );
    }
    await poll('stale-if-error back on', 30_000, async () =>
      (await review(replica('signet-b'), signed)).allowed ? true : 'still denied',
    );
  });
});

describe('the collector (the Lease holder)', () => {
  const api = () => openKubeApi({ kubeconfig: running().kubeconfig });
  const logger = createLogger({ level: 'silent' });
  const recordMetrics = () => {
    const metrics = new SignetMetrics({ defaultMetrics: false });
    return new RecordMetrics(metrics.registry, metrics.policyLabel);
  };

  it("deletes nothing unless it leads; then the oldest beyond the limit, what is expired and what is not Signet's", async () => {
    const key = new RecordKey({ api: api(), namespace: SIGNET_NAMESPACE, secretName: KEY_SECRET, logger });
    key.start();
    const store = new RecordStore({
      api: api(),
      namespace: SIGNET_NAMESPACE,
      key: () => key.current,
      logger,
      metrics: recordMetrics(),
    });
    store.start();
    try {
      await poll('the records to be listed with the key', 20_000, async () =>
        store.listed && key.current !== undefined ? true : 'not yet',
      );
      const secret = key.current as Buffer;
      const fingerprint = `sha256:${'c'.repeat(64)}`;
      // Older than the record of the signed image, so that the limit takes them first.
      const bulk = Array.from({ length: 30 }, (_, i) =>
        signedRecord(secret, SIGNET_NAMESPACE, {
          image: `${proxy.host}/app@sha256:${i.toString(16).padStart(64, '0')}`,
          policy: 'bulk',
          fingerprint,
          signers: [],
          verifiedAt: Date.now() - 3_600_000 - (30 - i) * 1000,
          verifiedBy: 'test',
        }),
      );
      await running().apply(bulk);
      // The signed image's record, the forged one and the 30.
      await poll('the store to see them', 20_000, async () => (store.size === 32 ? true : `${store.size}`));
      const collector = (options: { now?: number; maxRecords?: number }) =>
        new RecordCollector({
          api: api(),
          namespace: SIGNET_NAMESPACE,
          store,
          logger,
          metrics: recordMetrics(),
          election: { lease: 'signet-policy-status', durationMs: 15_000 },
          maxAgeMs: () => 24 * 3_600_000,
          maxRecords: options.maxRecords ?? 5000,
          now: () => options.now ?? Date.now(),
        });
      // A sweep whose Lease is lost (its signal aborted) deletes nothing.
      const lost = new AbortController();
      lost.abort();
      expect(await collector({ maxRecords: 20, now: Date.now() + 48 * 3_600_000 }).sweep(lost.signal)).toBe(
        0,
      );
      // At a limit of 20: down to 18 (90%), the oldest first; the signed image's record is kept.
      const over = collector({ maxRecords: 20 });
      const planned = over.plan();
      expect(planned.map((p) => p.reason)).toEqual(Array(13).fill('over-limit'));
      expect(planned.every((p) => p.record.read.ok && p.record.read.fields.policy === 'bulk')).toBe(true);
      expect(await over.sweep()).toBe(13);
      await poll('the store to see the deletions', 20_000, async () =>
        store.size === 19 ? true : `${store.size}`,
      );
      // 25 hours later everything is expired, and the forged record goes too (it is not Signet's).
      const later = collector({ now: Date.now() + 25 * 3_600_000 });
      const reasons = later.plan().map((p) => p.reason);
      expect(reasons.filter((r) => r === 'rejected')).toHaveLength(1);
      expect(reasons.filter((r) => r === 'expired')).toHaveLength(18);
      expect(await later.sweep()).toBe(19);
      await poll('no records left', 20_000, async () =>
        (await records()).length === 0 ? true : 'some left',
      );
    } finally {
      key.stop();
      await store.stop();
    }
  });
});
