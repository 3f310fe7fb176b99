// Stale-if-error and shared passes in the admission pipeline (issue 24), with a real registry (CNCF
// distribution), images pushed by crane and signed by the real cosign CLI, reached through a small
// forwarding proxy that can answer 429 (Docker Hub's rate limit) or stop answering, as a registry
// outage does. The records are the real record objects (signed and read by records/record-format.ts)
// held in a map: the same lookup the in-cluster store makes, without a cluster (the store, its
// informer, writer and collector run against a real API server in e2e/test/verification-records.test.ts).
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { join } from 'node:path';
import type { GracedPolicy, PassRecord } from '@signet/core';
import { type AdmissionRequest, parseAdmissionReviewJson } from '@signet/k8s-types';
import type { DigestRef } from '@signet/registry';
import type * as Testbed from '@signet/testbed';
import type { CompiledAuthorities, PassRecords, PolicyCheck } from '@signet/verifier';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Admission, assembleAdmission } from '../../src/admission/assemble-admission.js';
import type { GraceRecords } from '../../src/admission/grace.js';
import type { ReviewContext } from '../../src/http/review.js';
import { createLogger } from '../../src/logger.js';
import { SignetMetrics } from '../../src/metrics.js';
import { parsePolicyYaml } from '../../src/policy/policy-file.js';
import { compileSnapshot } from '../../src/policy/policy-store.js';
import {
  type RecordFields,
  type RecordObject,
  readRecord,
  recordName,
  signedRecord,
} from '../../src/records/record-format.js';
import { review, workload } from '../reviews.js';

const NS = 'signet-system';
const HOUR = 3_600_000;

let testbed: typeof Testbed;
let group: Testbed.ProcessGroup | undefined;
let runDir = '';
let proxy: Server;
/** What the proxy does: forward, answer 429, or drop the connection. */
let mode: 'forward' | '429' | 'down' = 'forward';
let proxied = 0;
let host = '';
let signed = '';
let otherSigned = '';
let unsigned = '';
let publicKey = '';
let otherPublicKey = '';

beforeAll(async () => {
  testbed = await import('@signet/testbed');
  const { crane } = await testbed.ensureTools(['crane', 'cosign', 'registry'], {
    onProgress: (event) => console.log(`testbed: ${event.message}`),
  });
  runDir = await testbed.createRunDir('signet-webhook-grace-');
  group = new testbed.ProcessGroup({ runDir, graceMs: 2000 });
  const registry = await testbed.startRegistry({ referrers: false, group });
  const target = new URL(registry.url);
  proxy = createServer((req, res) => {
    proxied++;
    if (mode === 'down') {
      req.socket.destroy();
      return;
    }
    if (mode === '429') {
      res.writeHead(429, { 'retry-after': '3600', 'content-type': 'application/json' });
      res.end('{"errors":[{"code":"TOOMANYREQUESTS","message":"rate limit exceeded"}]}');
      return;
    }
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => proxy.once('listening', resolve));
  host = `127.0.0.1:${(proxy.address() as { port: number }).port}`;
  const cosign = await testbed.createCosign({ workDir: runDir });
  const key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
  const otherKey = await cosign.generateKeyPair(join(runDir, 'other-keys'), 'pw');
  const push = async (repo: string, tag: string) =>
    `${host}/${repo}@${await testbed.pushRandomImage(registry, repo, tag, { crane, workDir: runDir })}`;
  signed = await push('team/app', 'v2');
  otherSigned = await push('team/app', 'v3');
  unsigned = await push('team/app', 'v1');
  // Signed through the registry's own address; the webhook reads them through the proxy.
  await cosign.signLegacyKeyed(signed.replace(host, registry.host), key);
  await cosign.signLegacyKeyed(otherSigned.replace(host, registry.host), key);
  publicKey = (await readFile(key.publicKey, 'utf8')).trim();
  otherPublicKey = (await readFile(otherKey.publicKey, 'utf8')).trim();
}, 30 * 60_000);

afterAll(async () => {
  proxy?.close();
  await group?.stopAll();
  if (runDir) await rm(runDir, { recursive: true, force: true });
});

beforeEach(() => {
  mode = 'forward';
});

function policies(options: { key?: string; grace?: string } = {}): string {
  const key = (options.key ?? publicKey).split('\n').join('\n          ');
  const annotation =
    options.grace === undefined ? '' : `, annotations: { signet.dev/stale-if-error: "${options.grace}" }`;
  return `
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: release, uid: u-release${annotation} }
spec:
  images: [{ glob: "${host}/team/**" }]
  authorities:
    - name: release-key
      key:
        data: |
          ${key}
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: other, uid: u-other }
spec:
  images: [{ glob: "${host}/elsewhere/**" }]
  authorities: [{ key: { data: "${publicKey.split('\n').join('\\n')}" } }]
`;
}

/** Records as the cluster holds them: signed objects by name, read back (and authenticated) on every lookup. */
class Records {
  readonly key = randomBytes(32);
  readonly objects = new Map<string, unknown>();
  readonly graced: { request: AdmissionRequest; image: string; graced: GracedPolicy }[] = [];
  readonly refusals: string[] = [];
  registryAsked = 0;

  put(fields: RecordFields, key = this.key, name?: string): void {
    const object = signedRecord(key, NS, fields) as { metadata: { name: string } };
    if (name !== undefined) object.metadata.name = name;
    this.objects.set(object.metadata.name, object);
  }

  find(policy: string, fingerprint: string, image: string): RecordFields | undefined {
    const object = this.objects.get(recordName(policy, fingerprint, image));
    if (object === undefined) return undefined;
    const read = readRecord(this.key, NS, object as RecordObject);
    if (!read.ok) return undefined;
    const { fields } = read;
    return fields.policy === policy && fields.fingerprint === fingerprint && fields.image === image
      ? fields
      : undefined;
  }

  passes(ttlMs: number): PassRecords {
    return {
      find: (policy: CompiledAuthorities, image: DigestRef) => {
        const fields = this.find(policy.policy, policy.revision, imageOf(image));
        const age = fields === undefined ? Number.POSITIVE_INFINITY : Date.now() - fields.verifiedAt;
        if (fields === undefined || age >= ttlMs) return undefined;
        const check: PolicyCheck = { policy: policy.policy, passed: true, authorities: [] };
        return { check, freshForMs: ttlMs - age };
      },
      passed: (policy: CompiledAuthorities, image: DigestRef) =>
        this.put({
          image: imageOf(image),
          policy: policy.policy,
          fingerprint: policy.revision,
          signers: [],
          verifiedAt: Date.now(),
          verifiedBy: 'replica-a',
        }),
    };
  }

  grace(defaultGraceMs: number): GraceRecords {
    return {
      defaultGraceMs,
      find: (policy, fingerprint, image): PassRecord | undefined => {
        const fields = this.find(policy, fingerprint, image);
        if (fields === undefined) return undefined;
        const [repository = '', digest = ''] = fields.image.split('@');
        return { repository, digest, policy, fingerprint, verifiedAt: fields.verifiedAt };
      },
      graced: (request, image, graced) => this.graced.push({ request, image, graced }),
      refused: (refusal) => this.refusals.push(refusal),
    };
  }

  /** Every record's verifiedAt moved `ms` into the past (re-signed: Signet wrote them that long ago). */
  age(ms: number): void {
    for (const [name, object] of this.objects) {
      const read = readRecord(this.key, NS, object as RecordObject);
      if (read.ok) this.put({ ...read.fields, verifiedAt: read.fields.verifiedAt - ms }, this.key, name);
    }
  }
}

const imageOf = (image: DigestRef) => `${image.registry}/${image.repository}@${image.digest}`;

/** A replica: its own memory cache, the shared records. */
async function replica(records: Records, options: { yaml?: string; ttlMs?: number; graceMs?: number } = {}) {
  const ttlMs = options.ttlMs ?? 300_000;
  const admission = assembleAdmission({
    logger: createLogger({ level: 'silent' }),
    metrics: new SignetMetrics({ defaultMetrics: false }),
    insecureRegistries: [host],
    cacheTtlMs: ttlMs,
    resolveDigests: true,
    records: { passes: records.passes(ttlMs), grace: records.grace(options.graceMs ?? 24 * HOUR) },
  });
  const { snapshot } = await compileSnapshot(parsePolicyYaml(options.yaml ?? policies(), NS), {
    namespace: NS,
  });
  if (snapshot === undefined) throw new Error('policies did not compile');
  admission.store.install(admission.store.begin(), snapshot);
  return admission;
}

function fingerprintOf(admission: Admission, policy: string): string {
  return admission.store.current?.policySet.policies.find((p) => p.name === policy)?.compiled.revision ?? '';
}

async function admit(admission: Admission, kind: string, image: string, options: { dryRun?: boolean } = {}) {
  const body = JSON.parse(review(kind, 'CREATE', workload(kind, image, { owner: 'ReplicaSet' })));
  body.request.dryRun = options.dryRun === true;
  const { request } = parseAdmissionReviewJson(JSON.stringify(body));
  const context: ReviewContext = {
    signal: new AbortController().signal,
    deadline: Date.now() + 8_000,
    budgetMs: 8_000,
  };
  return admission.service.review('validate', request, context);
}

const recordOf = (
  image: string,
  fingerprint: string,
  verifiedAt: number,
  policy = 'release',
): RecordFields => ({
  image,
  policy,
  fingerprint,
  signers: [],
  verifiedAt,
  verifiedBy: 'replica-a',
});

describe('shared passes: a second or restarted replica takes what another verified', () => {
  it('admits without asking the registry while the record is within the cache TTL', async () => {
    const records = new Records();
    const first = await replica(records);
    const before = proxied;
    expect((await admit(first, 'Pod', signed)).decision).toBe('allowed');
    expect(proxied).toBeGreaterThan(before);
    expect(records.objects.size).toBe(1);
    const second = await replica(records);
    const quiet = proxied;
    const answer = await admit(second, 'Pod', signed);
    expect(answer.decision).toBe('allowed');
    expect(answer.warnings ?? []).toEqual([]);
    expect(proxied, 'the registry was asked for a digest another replica verified').toBe(quiet);
  });
});

describe('stale-if-error: a record admits what the registry cannot answer for now', () => {
  /** A record 3 hours old, made by a real verification, then the registry in `outage`. */
  async function afterOutage(outage: 'down' | '429', options: { yaml?: string; graceMs?: number } = {}) {
    const records = new Records();
    await admit(await replica(records, options), 'Pod', signed);
    records.age(3 * HOUR);
    mode = outage;
    // Restarted: an empty memory cache, and the record is older than the cache TTL.
    return { records, restarted: await replica(records, options) };
  }

  for (const outage of ['down', '429'] as const) {
    it(`registry ${outage === 'down' ? 'stopped' : 'answering 429'}: admitted with a warning naming the record's age`, async () => {
      const { records, restarted } = await afterOutage(outage);
      const answer = await admit(restarted, 'Pod', signed);
      expect(answer.decision).toBe('warned');
      expect(answer.response.allowed).toBe(true);
      expect(answer.warnings).toEqual([
        expect.stringMatching(
          new RegExp(
            `^spec\\.containers\\[0\\]\\.image ${signed.replace(/[.[\]]/g, '\\$&')}: policy "release" \\(enforce\\): admitted on a verification record 3h old \\(stale-if-error\\): verification failed now: infrastructure failure: `,
          ),
        ),
      ]);
      expect(records.graced).toHaveLength(1);
      expect(records.graced[0]?.graced).toMatchObject({ policy: 'release' });
      expect(records.graced[0]?.request.object?.metadata?.ownerReferences?.[0]).toMatchObject({
        kind: 'ReplicaSet',
      });
    });
  }

  it('a workload template by digest is admitted the same way; a dry run neither counts nor records an Event', async () => {
    const { records, restarted } = await afterOutage('429');
    expect((await admit(restarted, 'Deployment', signed)).decision).toBe('warned');
    expect(records.graced).toHaveLength(1);
    expect((await admit(restarted, 'Pod', signed, { dryRun: true })).decision).toBe('warned');
    expect(records.graced).toHaveLength(1);
  });

  it('grace period 0 (the server default, or the policy annotation): denied as infrastructure', async () => {
    for (const options of [{ graceMs: 0 }, { yaml: policies({ grace: '0' }) }]) {
      const { records, restarted } = await afterOutage('429', options);
      const answer = await admit(restarted, 'Pod', signed);
      expect(answer.decision).toBe('denied');
      expect(answer.rule).toBe('infrastructure');
      expect(records.refusals).toContain('off');
    }
  });

  it('a record older than the grace period (the annotation shorter than its age): denied', async () => {
    const { records, restarted } = await afterOutage('429', { yaml: policies({ grace: '2h' }) });
    expect((await admit(restarted, 'Pod', signed)).decision).toBe('denied');
    expect(records.refusals).toContain('expired');
  });

  it('an unsigned digest with no record: denied as infrastructure', async () => {
    const { records, restarted } = await afterOutage('down');
    const answer = await admit(restarted, 'Pod', unsigned);
    expect(answer).toMatchObject({ decision: 'denied', rule: 'infrastructure' });
    expect(records.refusals).toContain('no-record');
  });

  it('after a policy change to another key (a new fingerprint), the replacement is denied; undone, admitted', async () => {
    const { records } = await afterOutage('429');
    const rotated = await replica(records, { yaml: policies({ key: otherPublicKey }) });
    expect((await admit(rotated, 'Pod', signed)).decision).toBe('denied');
    // Records are found by policy, fingerprint and image: under the new fingerprint there is none.
    expect(records.refusals).toContain('no-record');
    const reverted = await replica(records);
    expect((await admit(reverted, 'Pod', signed)).decision).toBe('warned');
  });

  it('never a policy failure: with the registry up, a digest without a signature is denied although a record says it passed', async () => {
    const records = new Records();
    const current = await replica(records);
    records.put(recordOf(unsigned, fingerprintOf(current, 'release'), Date.now() - HOUR));
    const answer = await admit(current, 'Pod', unsigned);
    expect(answer).toMatchObject({ decision: 'denied', rule: 'policy' });
    expect(records.graced).toEqual([]);
  });

  it('never a tag: a Deployment naming the signed image by tag is denied during the outage', async () => {
    const { records, restarted } = await afterOutage('429');
    const tag = `${signed.slice(0, signed.indexOf('@'))}:v2`;
    const answer = await admit(restarted, 'Deployment', tag);
    expect(answer.decision).toBe('denied');
    expect(records.graced).toEqual([]);
  });
});

describe('forged records admit nothing', () => {
  async function outageWith(put: (records: Records, fingerprint: string) => void) {
    const records = new Records();
    const current = await replica(records, { ttlMs: 1 });
    put(records, fingerprintOf(current, 'release'));
    mode = '429';
    return { records, answer: await admit(current, 'Pod', unsigned) };
  }

  it('a record signed under another key (anyone but Signet)', async () => {
    const { answer } = await outageWith((records, fp) =>
      records.put(recordOf(unsigned, fp, Date.now()), randomBytes(32)),
    );
    expect(answer).toMatchObject({ decision: 'denied', rule: 'infrastructure' });
  });

  it("a valid record of another digest, copied under this digest's name", async () => {
    const { answer } = await outageWith((records, fp) =>
      records.put(recordOf(otherSigned, fp, Date.now()), records.key, recordName('release', fp, unsigned)),
    );
    expect(answer).toMatchObject({ decision: 'denied', rule: 'infrastructure' });
  });

  it("a valid record of this digest under another policy's fingerprint", async () => {
    const { answer } = await outageWith((records, fp) => {
      const other = `sha256:${'0'.repeat(64)}`;
      records.put(recordOf(unsigned, other, Date.now()));
      // And the same record copied under the name the current fingerprint looks up.
      records.objects.set(
        recordName('release', fp, unsigned),
        records.objects.get(recordName('release', other, unsigned)),
      );
    });
    expect(answer).toMatchObject({ decision: 'denied', rule: 'infrastructure' });
  });

  it('a valid record of this digest for another policy', async () => {
    const { answer } = await outageWith((records, fp) =>
      records.put(recordOf(unsigned, fp, Date.now(), 'other')),
    );
    expect(answer).toMatchObject({ decision: 'denied', rule: 'infrastructure' });
  });

  it('an object that does not parse under the right name', async () => {
    const { answer } = await outageWith((records, fp) =>
      records.objects.set(recordName('release', fp, unsigned), {
        metadata: { name: 'x' },
        spec: { image: 42 },
      }),
    );
    expect(answer).toMatchObject({ decision: 'denied', rule: 'infrastructure' });
  });

  it('control: a valid record of this digest, policy and fingerprint admits (the test can fail)', async () => {
    const { answer } = await outageWith((records, fp) =>
      records.put(recordOf(unsigned, fp, Date.now() - HOUR)),
    );
    expect(answer.decision).toBe('warned');
  });
});
