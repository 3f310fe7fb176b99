import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AdmissionRequest } from '@signet/k8s-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createCertificateAuthority,
  type IssuedCertificate,
  issueServingCertificate,
} from '../../src/certificates.js';
import {
  type AdmissionAppOptions,
  createAdmissionApp,
  type ReviewHandler,
} from '../../src/http/admission-app.js';
import { createOpsApp } from '../../src/http/ops-app.js';
import { createLogger } from '../../src/logger.js';
import { SignetMetrics } from '../../src/metrics.js';
import { type RunningServers, startServers } from '../../src/server.js';
import { CertificateWatcher, readCertificatePair } from '../../src/tls.js';
import { LogCapture, post, reviewFixture } from '../helpers.js';

let ca: IssuedCertificate;
let servers: RunningServers;
let base: string;
const logs = new LogCapture();
const metrics = new SignetMetrics({ defaultMetrics: false });
let ready = false;
const seen: AdmissionRequest[] = [];
let release: (() => void) | undefined;

// The handler stands in for the decision + verification pipeline, which has its own tests; here
// only the HTTP contract is under test.
const handler: ReviewHandler = async (endpoint, request, context) => {
  seen.push(request);
  if (request.namespace === 'hang') {
    await new Promise((resolve) => context.signal.addEventListener('abort', resolve));
    // ignores the abort on purpose: the server must answer for it
    await new Promise((resolve) => setTimeout(resolve, 10_000).unref());
  }
  if (request.namespace === 'slow') await new Promise<void>((resolve) => (release = resolve));
  if (request.namespace === 'boom') throw new TypeError('exploded');
  return {
    response: { allowed: true, warnings: [`${endpoint} saw ${request.kind.kind}`] },
    decision: 'allowed',
    rule: 'test',
  };
};

beforeAll(async () => {
  ca = await createCertificateAuthority('signet-test-ca', 1);
  const serving = await issueServingCertificate(ca, ['localhost', '127.0.0.1'], 1);
  const logger = createLogger({ destination: logs });
  servers = await startServers({
    admissionApp: createAdmissionApp({ handler, logger, metrics }).listener,
    opsApp: createOpsApp(metrics, {
      ready: () => (ready ? { ready: true } : { ready: false, reason: 'policies not synced' }),
    }),
    certificate: serving,
    port: 0,
    opsPort: 0,
    host: '127.0.0.1',
    logger,
  });
  base = `https://127.0.0.1:${servers.port}`;
});

afterAll(async () => {
  await servers?.close(1000);
});

/** An admission app of its own on loopback (always ready), with a fresh serving certificate. */
async function serveOwn(options: AdmissionAppOptions): Promise<RunningServers> {
  return startServers({
    admissionApp: createAdmissionApp(options).listener,
    opsApp: createOpsApp(metrics, { ready: () => ({ ready: true }) }),
    certificate: await issueServingCertificate(ca, ['127.0.0.1'], 1),
    port: 0,
    opsPort: 0,
    host: '127.0.0.1',
    logger: options.logger,
  });
}

describe('admission endpoints over TLS', () => {
  it('answers a review with an AdmissionReview carrying the request uid', async () => {
    const answer = await post(`${base}/validate?timeout=10s`, reviewFixture('pod-create.json'), ca.cert);
    expect(answer.status).toBe(200);
    expect(answer.json()).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
        allowed: true,
        warnings: ['validate saw Pod'],
      },
    });
    const mutate = await post(`${base}/mutate`, reviewFixture('cronjob-create.json'), ca.cert);
    expect(mutate.json().response).toMatchObject({
      uid: 'c7c7c7c7-0000-4000-8000-00000000c7c7',
      warnings: ['mutate saw CronJob'],
    });
  });

  it('logs one line per admission, without secrets', async () => {
    await post(`${base}/validate`, reviewFixture('replicaset-scale-down.json'), ca.cert);
    const line = logs.lines.find((l) => l.uid === 'b6b3c4d5-1f2e-4d3c-9b8a-7f6e5d4c3b2a');
    expect(line).toMatchObject({
      msg: 'admission',
      endpoint: 'validate',
      kind: 'ReplicaSet',
      namespace: 'test',
      name: 'foo-bar-7c9d8f5b4c',
      operation: 'UPDATE',
      user: 'system:serviceaccount:kube-system:deployment-controller',
      decision: 'allowed',
      rule: 'test',
    });
    expect(typeof line?.durationMs).toBe('number');
  });

  it('answers malformed reviews with 400 naming the field, keeping the uid when readable', async () => {
    const missingUid = await post(`${base}/validate`, reviewFixture('malformed-missing-uid.json'), ca.cert);
    expect(missingUid.status).toBe(400);
    expect(missingUid.json()).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: '',
        allowed: false,
        status: { code: 400, message: 'malformed AdmissionReview: request.uid: required string' },
      },
    });
    const wrongType = await post(
      `${base}/validate`,
      reviewFixture('malformed-object-wrong-type.json'),
      ca.cert,
    );
    expect(wrongType.json().response).toMatchObject({
      uid: '00000000-0000-4000-8000-0000000000a3',
      status: { message: 'malformed AdmissionReview: request.object: must be an object, got array' },
    });
    const notJson = await post(`${base}/validate`, reviewFixture('malformed-not-json.txt'), ca.cert);
    expect(notJson.status).toBe(400);
    expect(String((notJson.json().response as { status: { message: string } }).status.message)).toMatch(
      /^malformed AdmissionReview: <root>: body is not valid JSON/,
    );
  });

  it('refuses bodies over the limit with 413, and deep nesting with 400', async () => {
    const huge = Buffer.alloc(11 * 1024 * 1024, 0x20);
    const answer = await post(`${base}/validate`, huge, ca.cert);
    expect(answer.status).toBe(413);
    expect(answer.json()).toMatchObject({ response: { uid: '', allowed: false, status: { code: 413 } } });
    const deep = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":${'['.repeat(2_000_000)}${']'.repeat(2_000_000)}}`;
    const nested = await post(`${base}/validate`, deep, ca.cert);
    expect(nested.status).toBe(400);
    expect(nested.body).toContain('JSON nested deeper than');
    // the process is still serving
    expect((await post(`${base}/validate`, reviewFixture('pod-create.json'), ca.cert)).status).toBe(200);
  });

  // Issue 21: a flood of large bodies is refused by the hundred; each refusal was logged as a bug
  // (a stack trace, serialized on the event loop), not as the expected condition it is.
  it('logs a large body it refuses unparsed as a coded condition, without a stack', async () => {
    const objects = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","x":[${Array(150_000).fill('{}').join(',')}]}}`;
    const before = logs.lines.length;
    const answer = await post(`${base}/validate`, objects, ca.cert);
    expect(answer.status).toBe(413);
    await new Promise((resolve) => setImmediate(resolve));
    const refused = logs.lines.slice(before).filter((line) => line.msg === 'refused an admission request');
    expect(refused).toEqual([
      expect.objectContaining({
        status: 413,
        err: {
          type: 'BodyError',
          code: 'HTTP_413',
          message: 'the AdmissionReview holds more than 100000 JSON objects and arrays',
        },
      }),
    ]);
  });

  it('answers inside the timeout even when the handler does not', async () => {
    const review = JSON.parse(reviewFixture('pod-create.json'));
    review.request.namespace = 'hang';
    const started = Date.now();
    const answer = await post(`${base}/validate?timeout=1s`, JSON.stringify(review), ca.cert);
    const elapsed = Date.now() - started;
    expect(answer.json().response).toMatchObject({
      uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
      allowed: false,
      status: { message: 'verification timed out after 1.1s' },
    });
    expect(elapsed).toBeLessThan(1000 + 500);
  });

  it('denies with the cause when the handler throws', async () => {
    const review = JSON.parse(reviewFixture('pod-create.json'));
    review.request.namespace = 'boom';
    const answer = await post(`${base}/validate`, JSON.stringify(review), ca.cert);
    expect(answer.json().response).toMatchObject({
      allowed: false,
      status: { code: 500, message: 'internal error while deciding: exploded' },
    });
  });

  it('404s other paths and methods', async () => {
    expect((await post(`${base}/admit`, '{}', ca.cert)).status).toBe(404);
  });
});

describe('operations endpoints', () => {
  it('serves /healthz, /readyz after the first sync, and /metrics', async () => {
    const ops = `http://127.0.0.1:${servers.opsPort}`;
    expect((await fetch(`${ops}/healthz`)).status).toBe(200);
    const notReady = await fetch(`${ops}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.text()).toBe('not ready: policies not synced');
    ready = true;
    expect((await fetch(`${ops}/readyz`)).status).toBe(200);
    const text = await (await fetch(`${ops}/metrics`)).text();
    expect(text).toMatch(
      /signet_admission_requests_total\{endpoint="validate",decision="allowed",rule="test",kind="Pod"\} \d+/,
    );
    expect(text).toMatch(
      /signet_admission_requests_total\{endpoint="validate",decision="error",rule="malformed",kind="unknown"\} 4/,
    );
    expect(text).toContain('signet_admission_duration_seconds_bucket');
  });
});

describe('TLS certificate reload and graceful shutdown', () => {
  it('serves a new certificate after the files change', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signet-tls-'));
    const first = await issueServingCertificate(ca, ['127.0.0.1'], 1);
    writeFileSync(join(dir, 'tls.crt'), first.cert);
    writeFileSync(join(dir, 'tls.key'), first.key);
    const logger = createLogger({ destination: new LogCapture() });
    const watcher = new CertificateWatcher(
      {
        certFile: join(dir, 'tls.crt'),
        keyFile: join(dir, 'tls.key'),
        logger,
        onChange: (pair) => servers.setCertificate(pair),
      },
      readCertificatePair(join(dir, 'tls.crt'), join(dir, 'tls.key')),
    );
    servers.setCertificate(first);
    const before = await post(`${base}/validate`, reviewFixture('pod-create.json'), ca.cert);
    const second = await issueServingCertificate(ca, ['127.0.0.1'], 1);
    writeFileSync(join(dir, 'tls.key'), second.key);
    writeFileSync(join(dir, 'tls.crt'), second.cert);
    expect(watcher.check()).toBe(true);
    expect(watcher.check()).toBe(false);
    const after = await post(`${base}/validate`, reviewFixture('pod-create.json'), ca.cert);
    expect(after.status).toBe(200);
    expect(after.peerSerial).not.toBe(before.peerSerial);
    writeFileSync(join(dir, 'tls.crt'), 'garbage');
    expect(watcher.check()).toBe(false);
    watcher.stop();
  });

  it('finishes in-flight reviews before closing', async () => {
    const logger = createLogger({ destination: new LogCapture() });
    const own = await serveOwn({ handler, logger, metrics });
    const review = JSON.parse(reviewFixture('pod-create.json'));
    review.request.namespace = 'slow';
    const pending = post(`https://127.0.0.1:${own.port}/validate`, JSON.stringify(review), ca.cert);
    while (release === undefined) await new Promise((r) => setTimeout(r, 10));
    const closing = own.close(5000);
    release();
    const answer = await pending;
    await closing;
    expect(answer.status).toBe(200);
    expect(answer.json().response).toMatchObject({ allowed: true });
  });
});

describe('the per-review admission line', () => {
  it('goes to the admission logger when one is given (the unredacted fast one), other events to the logger', async () => {
    const events = new LogCapture();
    const admissions = new LogCapture();
    const own = await serveOwn({
      handler,
      logger: createLogger({ destination: events }),
      admissionLog: createLogger({ destination: admissions }),
      metrics,
    });
    try {
      const answer = await post(
        `https://127.0.0.1:${own.port}/validate?timeout=10s`,
        reviewFixture('pod-create.json'),
        ca.cert,
      );
      expect(answer.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(admissions.lines.filter((l) => l.msg === 'admission')).toHaveLength(1);
      expect(events.lines.filter((l) => l.msg === 'admission')).toHaveLength(0);
    } finally {
      await own.close(1000);
    }
  });
});

describe('the quick handler (cheap decisions without a deadline)', () => {
  it('answers what it can; the full handler answers what it leaves (undefined), what it throws on, and /validate-policy', async () => {
    const full: string[] = [];
    const quickSeen: string[] = [];
    const own = await serveOwn({
      handler: async (endpoint, request) => {
        full.push(`${endpoint} ${request.namespace}`);
        return {
          response: { allowed: false, status: { code: 403, message: 'full' } },
          decision: 'denied',
          rule: 'full',
        };
      },
      quickHandler: (endpoint, request) => {
        quickSeen.push(`${endpoint} ${request.namespace}`);
        if (request.namespace === 'boom') throw new TypeError('exploded');
        if (request.namespace !== 'quick') return undefined;
        return {
          response: { allowed: true, warnings: ['quick'] },
          decision: 'allowed',
          rule: 'scale-down',
        };
      },
      policyHandler: async () => ({ response: { allowed: true }, decision: 'allowed', rule: 'policy' }),
      logger: createLogger({ destination: new LogCapture() }),
      metrics,
    });
    const ask = async (endpoint: string, namespace: string) => {
      const review = JSON.parse(reviewFixture('pod-create.json'));
      review.request.namespace = namespace;
      const answer = await post(`https://127.0.0.1:${own.port}/${endpoint}`, JSON.stringify(review), ca.cert);
      expect(answer.status).toBe(200);
      return answer.json().response as { allowed: boolean; uid: string; warnings?: string[] };
    };
    try {
      const quick = await ask('validate', 'quick');
      expect(quick).toMatchObject({ allowed: true, warnings: ['quick'] });
      expect(quick.uid).toBe(JSON.parse(reviewFixture('pod-create.json')).request.uid);
      expect(await ask('mutate', 'quick')).toMatchObject({ allowed: true, warnings: ['quick'] });
      expect(await ask('validate', 'verify')).toMatchObject({ allowed: false });
      expect(await ask('validate', 'boom')).toMatchObject({ allowed: false });
      expect(await ask('validate-policy', 'quick')).toMatchObject({ allowed: true });
      expect(full).toEqual(['validate verify', 'validate boom']);
      expect(quickSeen).toEqual(['validate quick', 'mutate quick', 'validate verify', 'validate boom']);
    } finally {
      await own.close(1000);
    }
  });
});
