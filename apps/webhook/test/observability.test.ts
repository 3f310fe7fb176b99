// Metrics and logs of a real Signet (HTTPS, the composition root) facing real failing registries:
// a TCP server that accepts and never answers (the review's deadline passes: counted as a
// timeout), and a port nobody listens on (unreachable). Expected conditions (denials, dead
// registries) are logged without stack traces; a review that denies and warns logs both.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegistryError } from '@signet/registry';
import { freePort } from '@signet/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryErrorClass } from '../src/admission/assemble-admission.js';
import { createCertificateAuthority, issueServingCertificate } from '../src/certificates.js';
import { serveConfigFrom } from '../src/commands/serve-config.js';
import { ReviewTimeout } from '../src/http/admission-app.js';
import { createLogger } from '../src/logger.js';
import { BoundedLabel, OTHER_LABEL, SignetMetrics } from '../src/metrics.js';
import { type RunningSignet, startSignet } from '../src/signet.js';
import { version } from '../src/version.js';
import { LogCapture, post, reviewFixture } from './helpers.js';

let dir = '';
let signet: RunningSignet;
let ca = '';
let hanging: Server;
const sockets: Socket[] = [];
const logs = new LogCapture();
const metrics = new SignetMetrics({
  defaultMetrics: false,
  build: { version: version(), revision: 'abc123' },
});
let hangHost = '';
let deadHost = '';
let deadWarnHost = '';
const digest = `sha256:${'a'.repeat(64)}`;

const key = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .publicKey.export({ format: 'pem', type: 'spki' })
  .toString()
  .trim()
  .split('\n')
  .join('\n          ');

function policy(name: string, host: string, mode: 'enforce' | 'warn'): string {
  return `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: ${name} }
spec:
  mode: ${mode}
  images: [{ glob: "${host}/**" }]
  authorities:
    - key:
        data: |
          ${key}
`;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signet-observability-'));
  hanging = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  hangHost = `127.0.0.1:${(hanging.address() as { port: number }).port}`;
  deadHost = `127.0.0.1:${await freePort()}`;
  deadWarnHost = `127.0.0.1:${await freePort()}`;
  const authority = await createCertificateAuthority('signet-observability', 1);
  const serving = await issueServingCertificate(authority, ['127.0.0.1'], 1);
  ca = authority.cert;
  await writeFile(join(dir, 'tls.crt'), serving.cert);
  await writeFile(join(dir, 'tls.key'), serving.key);
  await writeFile(
    join(dir, 'policies.yaml'),
    [
      policy('hang', hangHost, 'enforce'),
      policy('dead', deadHost, 'enforce'),
      policy('dead-warn', deadWarnHost, 'warn'),
    ].join('---\n'),
  );
  const config = serveConfigFrom(
    {
      port: '0',
      'ops-port': '0',
      host: '127.0.0.1',
      'policy-file': [join(dir, 'policies.yaml')],
      'tls-cert-file': join(dir, 'tls.crt'),
      'tls-key-file': join(dir, 'tls.key'),
      'insecure-registry': [hangHost, deadHost, deadWarnHost],
    },
    {},
  );
  signet = await startSignet(config, { logger: createLogger({ destination: logs }), metrics });
});

afterAll(async () => {
  await signet?.stop(0);
  for (const socket of sockets) socket.destroy();
  hanging?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The pod-create fixture in namespace `ns` running `images`. */
function podReview(ns: string, images: readonly string[]): string {
  const review = JSON.parse(reviewFixture('pod-create.json'));
  review.request.uid = `uid-${Math.random()}`;
  review.request.namespace = ns;
  review.request.object.metadata.namespace = ns;
  review.request.object.spec.containers = images.map((image, i) => ({ name: `c${i}`, image }));
  review.request.object.spec.initContainers = [];
  return JSON.stringify(review);
}

async function validate(body: string, timeout = '10s') {
  const answer = await post(`https://127.0.0.1:${signet.servers.port}/validate?timeout=${timeout}`, body, ca);
  return (
    answer.json() as { response: { allowed: boolean; status?: { message: string }; warnings?: string[] } }
  ).response;
}

const metric = async (name: string) => metrics.registry.getSingleMetricAsString(name);
const admissionLines = () => logs.lines.filter((line) => line.msg === 'admission');

describe('metrics', () => {
  it("reports the serving certificate's expiry at start and again when the certificate is replaced", async () => {
    const expiry = async () =>
      Number(
        /^signet_serving_certificate_expiry_timestamp_seconds (\S+)$/m.exec(
          await metric('signet_serving_certificate_expiry_timestamp_seconds'),
        )?.[1],
      );
    const near = async (seconds: number) => {
      const deadline = Date.now() + 20_000;
      while (Math.abs((await expiry()) - seconds) > 600 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 200));
      return Math.abs((await expiry()) - seconds);
    };
    const inOneDay = Date.now() / 1000 + 86_400;
    expect(await near(inOneDay)).toBeLessThan(600);
    const original = {
      cert: await readFile(join(dir, 'tls.crt'), 'utf8'),
      key: await readFile(join(dir, 'tls.key'), 'utf8'),
    };
    const authority = await createCertificateAuthority('signet-observability-renewed', 10);
    const renewed = await issueServingCertificate(authority, ['127.0.0.1'], 10);
    await writeFile(join(dir, 'tls.key'), renewed.key);
    await writeFile(join(dir, 'tls.crt'), renewed.cert);
    expect(await near(Date.now() / 1000 + 10 * 86_400)).toBeLessThan(600);
    // Back to the certificate the other tests' clients trust.
    await writeFile(join(dir, 'tls.key'), original.key);
    await writeFile(join(dir, 'tls.crt'), original.cert);
    expect(await near(inOneDay)).toBeLessThan(600);
  }, 60_000);

  it("counts a review's deadline cutting a registry call as a timeout, never as aborted", async () => {
    const answer = await validate(podReview('apps', [`${hangHost}/app@${digest}`]), '2s');
    expect(answer.allowed).toBe(false);
    expect(answer.status?.message).toContain('timed out');
    const errors = await metric('signet_registry_errors_total');
    expect(errors).toMatch(/class="timeout"\} [1-9]/);
    expect(errors).not.toContain('aborted');
  });

  it('classes registry errors by code; an abort is a timeout when the review ran out of time', () => {
    const at = { registry: 'registry.example' };
    const aborted = (cause: unknown) =>
      new RegistryError('ABORTED', at, 'the request was cancelled', { cause });
    expect(registryErrorClass(aborted(new ReviewTimeout('timed out after 9.0s')))).toBe('timeout');
    expect(registryErrorClass(aborted(new Error('answered')))).toBe('cancelled');
    expect(registryErrorClass(new RegistryError('TIMEOUT', at, 'deadline'))).toBe('timeout');
    expect(registryErrorClass(new RegistryError('NOT_FOUND', at, 'no such manifest'))).toBe('not_found');
  });

  it('counts admissions by namespace and decision, and results by policy', async () => {
    await validate(podReview('team-a', [`${deadHost}/app@${digest}`]));
    const namespaces = await metric('signet_namespace_admissions_total');
    expect(namespaces).toContain('signet_namespace_admissions_total{namespace="team-a",decision="denied"} 1');
    const results = await metric('signet_policy_results_total');
    expect(results).toMatch(/\{policy="dead",result="error"\} [1-9]/);
    expect(await metric('signet_registry_errors_total')).toMatch(/class="unreachable"\} [1-9]/);
  });

  it('says which Signet runs (signet_build_info) and whether it is ready', async () => {
    expect(await metric('signet_build_info')).toContain(
      `signet_build_info{version="${version()}",revision="abc123",node="${process.version}"} 1`,
    );
    expect(await metric('signet_ready')).toContain('signet_ready 1');
  });

  it('keeps label values bounded: the first N of the expected shape, the rest as _other', () => {
    const label = new BoundedLabel(2, /^[a-z]+$/);
    expect([label.value('a'), label.value('b'), label.value('c'), label.value('a')]).toEqual([
      'a',
      'b',
      OTHER_LABEL,
      'a',
    ]);
    expect(label.value('NOT-A-NAME')).toBe(OTHER_LABEL);
    expect(label.value(undefined)).toBe('none');
  });
});

describe('logs', () => {
  it('a review that denies and warns logs both, and no expected condition carries a stack trace', async () => {
    const answer = await validate(
      podReview('mixed', [`${deadHost}/app@${digest}`, `${deadWarnHost}/side@${digest}`]),
    );
    expect(answer.allowed).toBe(false);
    expect(answer.warnings?.length).toBe(1);
    const line = admissionLines().find((l) => l.namespace === 'mixed');
    expect(line).toMatchObject({ level: 'warn', decision: 'denied', rule: 'infrastructure' });
    expect(String(line?.reason)).toContain(deadHost);
    expect(line?.warnings).toEqual([expect.stringContaining(deadWarnHost)]);
    // The mutating endpoint cannot pin a tag on a dead registry: logged as a coded error.
    const mutate = JSON.parse(podReview('pin', [`${deadHost}/app:v1`]));
    await post(`https://127.0.0.1:${signet.servers.port}/mutate`, JSON.stringify(mutate), ca);
    const pin = logs.lines.find((l) => l.msg === 'cannot resolve a tag to pin it');
    expect(pin?.err).toMatchObject({ type: 'RegistryError', code: 'UNREACHABLE' });
    for (const entry of logs.lines) {
      expect(JSON.stringify(entry), String(entry.msg)).not.toMatch(/"stack"|\\n\s+at /);
    }
  });

  it('an error without a code (a bug) keeps its stack', async () => {
    const capture = new LogCapture();
    const logger = createLogger({ destination: capture });
    logger.error({ err: new TypeError('x is not a function') }, 'bug');
    await new Promise((resolve) => setImmediate(resolve));
    expect(capture.lines[0]?.err).toMatchObject({
      type: 'TypeError',
      stack: expect.stringContaining('\n    at '),
    });
  });
});
