// `policy.remote`: fetched from a real HTTPS server on loopback (a self-signed certificate minted by
// @signet/testbed), when the policy is compiled: digest checked, size capped, deadline, failures retried on
// a schedule, never fetched again once it matched.
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPolicyEngines, type PolicyEngines } from '@signet/policy-engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAuthorities } from '../../src/policy/compile.js';
import { RemotePolicyError, remotePolicyFetcher } from '../../src/policy/remote-policy.js';
import { clusterImagePolicy } from '../support/policies.js';
import { listenInRange } from '../support/ports.js';
import { loadTestbed } from '../support/registry-helpers.js';

const POLICY =
  'predicateType: "https://cosign.sigstore.dev/attestation/v1"\npredicate: Data: "foobar e2e test"\n';
const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

describe('remote policies', () => {
  let dir = '';
  let server: Server;
  let base = '';
  let ca = '';
  // The server is on loopback: listed as the operator would list a private policy server.
  let privateHosts: string[] = [];
  const served: string[] = [];
  let engines: PolicyEngines;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'signet-remote-policy-'));
    const certificate = await (await loadTestbed()).mintServerCertificate(dir, '127.0.0.1', ['127.0.0.1']);
    ca = certificate.pem;
    server = createServer({ key: certificate.keyPem, cert: ca }, (request, response) => {
      served.push(request.url ?? '');
      if (request.url === '/policy.cue') response.end(POLICY);
      else if (request.url === '/large') response.end('x'.repeat(64 * 1024));
      else if (request.url === '/silent')
        return; // never answers
      else {
        response.statusCode = 404;
        response.end('not found');
      }
    });
    base = `https://127.0.0.1:${await listenInRange(server)}`;
    privateHosts = [new URL(base).host];
    engines = createPolicyEngines();
  });

  afterAll(async () => {
    server?.close();
    await engines?.close();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('fetches a policy whose sha256 matches, once, and compiles it', async () => {
    const fetchRemotePolicy = remotePolicyFetcher({ ca, privateHosts });
    const cip = clusterImagePolicy([{ static: { action: 'pass' } }], {
      policy: { type: 'cue', remote: { url: `${base}/policy.cue`, sha256sum: sha256(POLICY) } },
    });
    const before = served.length;
    const first = await compileAuthorities(cip, { engines, fetchRemotePolicy });
    const second = await compileAuthorities(cip, { engines, fetchRemotePolicy });
    expect(first.specPolicy?.program).toMatchObject({ language: 'cue', source: POLICY });
    expect(second.specPolicy?.program.source).toBe(POLICY);
    expect(served.length - before).toBe(1);
  });

  it('refuses content whose sha256 is not the pinned one, with a broken-policy message', async () => {
    const cip = clusterImagePolicy([{ static: { action: 'pass' } }], {
      policy: { type: 'cue', remote: { url: `${base}/policy.cue`, sha256sum: 'ab'.repeat(32) } },
    });
    await expect(
      compileAuthorities(cip, { engines, fetchRemotePolicy: remotePolicyFetcher({ ca, privateHosts }) }),
    ).rejects.toMatchObject({
      code: 'REMOTE_POLICY_FAILED',
      message: `ClusterImagePolicy "release": spec.policy.remote (policy of the ClusterImagePolicy): fetching the policy from ${base}/policy.cue: its sha256 is ${sha256(POLICY)}, not the sha256sum ${'ab'.repeat(32)} the policy pins`,
    });
  });

  it('bounds the size and the time, and reports an error status', async () => {
    const fetch = remotePolicyFetcher({ ca, privateHosts, maxBytes: 1024, timeoutMs: 500 });
    await expect(fetch(`${base}/large`, 'ab'.repeat(32))).rejects.toThrow(
      'the policy is larger than 1024 bytes',
    );
    const started = Date.now();
    await expect(fetch(`${base}/silent`, 'ab'.repeat(32))).rejects.toThrow(RemotePolicyError);
    expect(Date.now() - started).toBeLessThan(3_000);
    await expect(fetch(`${base}/missing`, 'ab'.repeat(32))).rejects.toThrow('the server answered 404');
    // Node's own CA store does not know the loopback certificate.
    await expect(remotePolicyFetcher({ privateHosts })(`${base}/policy.cue`, sha256(POLICY))).rejects.toThrow(
      'the TLS handshake failed',
    );
  });

  it('remembers a failure for a while, then tries again', async () => {
    let now = 0;
    const fetch = remotePolicyFetcher({ ca, privateHosts, retryAfterMs: 60_000, now: () => now });
    const url = `${base}/missing`;
    const before = served.length;
    await expect(fetch(url, 'cd'.repeat(32))).rejects.toThrow('404');
    await expect(fetch(url, 'cd'.repeat(32))).rejects.toThrow('404');
    expect(served.length - before).toBe(1);
    now = 61_000;
    await expect(fetch(url, 'cd'.repeat(32))).rejects.toThrow('404');
    expect(served.length - before).toBe(2);
  });

  it('keeps a bounded number of policies', async () => {
    const fetch = remotePolicyFetcher({ ca, privateHosts, maxEntries: 1 });
    const before = served.length;
    await fetch(`${base}/policy.cue`, sha256(POLICY));
    await expect(fetch(`${base}/missing`, 'ef'.repeat(32))).rejects.toThrow('404');
    await fetch(`${base}/policy.cue`, sha256(POLICY));
    expect(served.length - before).toBe(3);
  });

  it("applies upstream's validation: https with a host, a sha256sum, a fetcher", async () => {
    const compileRemote = (remote: Record<string, string>, context = {}) =>
      compileAuthorities(
        clusterImagePolicy([{ static: { action: 'pass' } }], { policy: { type: 'rego', remote } }),
        { engines, ...context },
      );
    await expect(compileRemote({ url: 'http://127.0.0.1/p', sha256sum: sha256(POLICY) })).rejects.toThrow(
      'spec.policy.remote.url (policy of the ClusterImagePolicy): "http://127.0.0.1/p" is invalid: a host and the https scheme are expected',
    );
    await expect(compileRemote({ url: 'https://127.0.0.1/p' })).rejects.toThrow(
      'remote.sha256sum (policy of the ClusterImagePolicy): missing field',
    );
    await expect(compileRemote({ url: 'https://127.0.0.1/p', sha256sum: 'xyz' })).rejects.toThrow(
      'must be 64 hexadecimal digits',
    );
    await expect(compileRemote({ url: 'https://127.0.0.1/p', sha256sum: sha256(POLICY) })).rejects.toThrow(
      'remote policies need a fetcher',
    );
  });
});
