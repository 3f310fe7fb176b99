// The public-good root embedded in @sigstore/tuf, custom TrustedRoot JSON, the TrustRoot CRD's
// sigstoreKeys form, and the resolver the policy compiler uses.
import { createHash, generateKeyPairSync } from 'node:crypto';
import type { TrustRoot } from '@signet/k8s-types';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileTrustRoot, trustRootResolver } from '../../src/trust/compile.js';
import { TrustRootError } from '../../src/trust/errors.js';
import { PUBLIC_GOOD_MIRROR, publicGoodTrustRoot, trustRootFromSeed } from '../../src/trust/public-good.js';
import { trustedRootFromSigstoreKeys } from '../../src/trust/sigstore-keys.js';
import { trustRootFromJSON } from '../../src/trust/trusted-root.js';
import { KEYLESS, keylessCheck, trustOf, verified } from '../support/checks.js';
import {
  certify,
  GITHUB_ISSUER,
  hashedRekordBody,
  type Infra,
  legacySignature,
  logEntry,
  makeInfra,
  publicPem,
  REKOR_URL,
  setAnnotation,
  signBytes,
  simpleSigningPayload,
  timestampToken,
  WORKFLOW,
} from '../support/fixtures.js';
import { makeTufRepo } from '../support/tuf.js';

let infra: Infra;
beforeAll(async () => {
  infra = await makeInfra();
});

const pem = (der: ArrayBufferView) =>
  `-----BEGIN CERTIFICATE-----\n${Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString('base64')}\n-----END CERTIFICATE-----\n`;
const b64 = (text: string) => Buffer.from(text).toString('base64');

function trustRootObject(name: string, spec: TrustRoot['spec']): TrustRoot {
  return { apiVersion: 'policy.sigstore.dev/v1alpha1', kind: 'TrustRoot', metadata: { name }, spec };
}

function sigstoreKeysFor(parts: Infra): TrustRoot['spec'] {
  const spki = (key: Buffer) =>
    `-----BEGIN PUBLIC KEY-----\n${key.toString('base64')}\n-----END PUBLIC KEY-----\n`;
  return {
    sigstoreKeys: {
      certificateAuthorities: [
        {
          subject: { organization: 'mock', commonName: 'fulcio' },
          uri: 'https://fulcio.mock.test',
          certChain: b64(pem(parts.ca.rootCertificate)),
        },
      ],
      tLogs: [{ baseURL: REKOR_URL, hashAlgorithm: 'sha-256', publicKey: b64(spki(parts.tlog.publicKey)) }],
      ctLogs: [{ baseURL: 'https://ctfe.mock.test', publicKey: b64(spki(parts.ctlog.publicKey)) }],
      timestampAuthorities: [
        { certChain: b64(pem(parts.tsa.intCertificate) + pem(parts.tsa.rootCertificate)) },
      ],
    },
  };
}

describe('the public-good trust root', () => {
  it('loads offline from the seed inside @sigstore/tuf', async () => {
    const root = await publicGoodTrustRoot({ clock: () => new Date(0) });
    expect(root).toMatchObject({ name: 'public-good', origin: 'public-good', loadedAt: new Date(0) });
    expect(root.trustedRoot.tlogs.map((log) => log.baseUrl)).toContain('https://rekor.sigstore.dev');
    for (const part of ['certificateAuthorities', 'ctlogs', 'tlogs', 'timestampAuthorities'] as const) {
      expect(root.material[part].length).toBeGreaterThan(0);
    }
    expect(PUBLIC_GOOD_MIRROR).toBe('https://tuf-repo-cdn.sigstore.dev');
  });

  it('reports a seed without trusted root, or not base64', () => {
    expect(() => trustRootFromSeed(undefined)).toThrow(
      expect.objectContaining({ code: 'TRUST_ROOT_UNAVAILABLE', trustRoot: 'public-good' }),
    );
    expect(() => trustRootFromSeed({ targets: { 'trusted_root.json': '%%%' } })).toThrow(
      expect.objectContaining({ code: 'TRUST_ROOT_INVALID' }),
    );
  });
});

describe('TrustedRoot JSON', () => {
  it('is read from a string, bytes or parsed JSON', () => {
    const text = JSON.stringify(infra.trustedRootJSON);
    for (const document of [text, Buffer.from(text), infra.trustedRootJSON]) {
      expect(trustRootFromJSON(document, { name: 'custom' }).material.tlogs).toHaveLength(1);
    }
  });

  it('is refused when malformed, with the cause', () => {
    const invalid = (document: unknown) => {
      try {
        trustRootFromJSON(document, { name: 'bad' });
      } catch (error) {
        if (error instanceof TrustRootError) return error;
      }
      throw new Error('expected a TrustRootError');
    };
    expect(invalid('{').message).toBe('TrustRoot "bad": trusted root is not JSON');
    expect(invalid([]).message).toBe('TrustRoot "bad": trusted root must be a JSON object');
    expect(invalid({ mediaType: 'application/json' }).message).toBe(
      'TrustRoot "bad": unexpected mediaType "application/json"',
    );
    expect(invalid({ tlogs: [{ publicKey: { keyDetails: 'NOPE' } }] }).message).toBe(
      'TrustRoot "bad": not a TrustedRoot',
    );
    const badCert = { certificateAuthorities: [{ certChain: { certificates: [{ rawBytes: 'AAAA' }] } }] };
    expect(invalid(badCert)).toMatchObject({
      code: 'TRUST_ROOT_INVALID',
      message: 'TrustRoot "bad": a certificate or key does not parse',
    });
  });
});

describe('log keys without a validity start', () => {
  it('are refused, naming the log', async () => {
    const infra = await makeInfra();
    const document = structuredClone(infra.trustedRootJSON) as {
      tlogs: { baseUrl?: string; publicKey: { validFor?: unknown } }[];
      ctlogs: { baseUrl?: string; publicKey: { validFor?: unknown } }[];
    };
    const tlog = document.tlogs[0];
    if (tlog === undefined) throw new Error('no tlog');
    delete tlog.publicKey.validFor;
    expect(() => trustRootFromJSON(document, { name: 'x' })).toThrow(
      /TrustRoot "x": tlogs\[0\] \(https:\/\/rekor\.mock\.test\): the public key has no validFor\.start/,
    );
    const ctOnly = structuredClone(infra.trustedRootJSON) as typeof document;
    const ctlog = ctOnly.ctlogs[0];
    if (ctlog === undefined) throw new Error('no ctlog');
    delete ctlog.baseUrl;
    ctlog.publicKey.validFor = {};
    expect(() => trustRootFromJSON(ctOnly, { name: 'y' })).toThrow(/ctlogs\[0\] \(no baseUrl\)/);
  });
});

describe('the sigstoreKeys form', () => {
  it('builds a trust root that verifies a keyless signature with SCT, SET and timestamp', async () => {
    const root = await compileTrustRoot(trustRootObject('inline', sigstoreKeysFor(infra)), {
      clock: () => new Date(1),
    });
    expect(root).toMatchObject({ name: 'inline', origin: 'sigstore-keys', loadedAt: new Date(1) });
    const logID = createHash('sha256').update(infra.tlog.publicKey).digest();
    expect(root.trustedRoot.tlogs[0]?.logId?.keyId).toEqual(logID);
    const signer = await certify(infra.ca);
    const payload = simpleSigningPayload();
    const signature = signBytes(signer, payload);
    const entry = await logEntry(infra.tlog, hashedRekordBody(payload, signature, signer.certificatePem));
    const artifact = legacySignature(payload, signature, {
      certificatePem: signer.certificatePem,
      set: setAnnotation(entry),
      rfc3161: await timestampToken(infra.tsa, signature),
    });
    const check = keylessCheck([{ issuer: GITHUB_ISSUER, subject: WORKFLOW }], trustOf(root.material), {
      ...KEYLESS,
      timestampAuthority: true,
    });
    expect(verified(artifact, check).signer.type).toBe('keyless');
  });

  it('records key details sigstore-js can read for each key type', () => {
    const ec = (namedCurve: string) => b64(publicPem(generateKeyPairSync('ec', { namedCurve }).publicKey));
    const logs = [
      { publicKey: ec('P-384') },
      { publicKey: ec('P-521') },
      { publicKey: ec('secp256k1') },
      { publicKey: b64(publicPem(generateKeyPairSync('ed25519').publicKey)) },
      {
        publicKey: b64(publicPem(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey)),
        hashAlgorithm: 'sha384',
      },
      { publicKey: ec('P-256'), hashAlgorithm: 'SHA-512' },
      { publicKey: ec('P-256'), hashAlgorithm: 'sha512' },
      { publicKey: ec('P-256'), hashAlgorithm: 'sha-384' },
    ];
    const root = trustedRootFromSigstoreKeys('keys', { certificateAuthorities: [], tLogs: logs });
    expect(root.tlogs.map((log) => [log.publicKey?.keyDetails, log.hashAlgorithm])).toEqual([
      [12, 1],
      [13, 1],
      [0, 1],
      [7, 1],
      [0, 2],
      [5, 3],
      [5, 3],
      [5, 2],
    ]);
    expect(trustRootFromJSON({}, { name: 'x' }).material.tlogs).toEqual([]);
  });

  it('names the field that does not parse', () => {
    const invalid = (keys: Record<string, unknown>) => () =>
      trustedRootFromSigstoreKeys('keys', { certificateAuthorities: [], ...keys } as never);
    expect(invalid({ certificateAuthorities: [{ certChain: 'not base64!' }] })).toThrow(
      'TrustRoot "keys": spec.sigstoreKeys.certificateAuthorities[0]: certChain must be base64 of PEM',
    );
    expect(
      invalid({
        ctLogs: [{ publicKey: b64(publicPem(generateKeyPairSync('ed25519').publicKey).repeat(2)) }],
      }),
    ).toThrow('spec.sigstoreKeys.ctLogs[0]: publicKey must hold one key, got 2');
    expect(
      invalid({
        timestampAuthorities: [{ certChain: b64(publicPem(generateKeyPairSync('ed25519').publicKey)) }],
      }),
    ).toThrow('spec.sigstoreKeys.timestampAuthorities[0]: expected CERTIFICATE blocks, got "PUBLIC KEY"');
  });
});

describe('compiling TrustRoot objects', () => {
  it('loads each form', async () => {
    const repo = makeTufRepo({ 'trusted_root.json': Buffer.from(JSON.stringify(infra.trustedRootJSON)) });
    const tar = await import('../support/tuf.js').then((m) => m.tarGz(repo.files));
    const repository = await compileTrustRoot(
      trustRootObject('r', {
        repository: { root: repo.root.toString('base64'), mirrorFS: tar.toString('base64') },
      }),
    );
    expect(repository.origin).toBe('repository');
    const remote = await compileTrustRoot(
      trustRootObject('m', { remote: { root: repo.root.toString('base64'), mirror: 'https://m' } }),
      {
        tufClient: async () => ({
          content: JSON.stringify(infra.trustedRootJSON),
          expires: new Date('2099-01-01'),
          verified: new Map(),
        }),
      },
    );
    expect(remote.origin).toBe('remote');
    await expect(compileTrustRoot(trustRootObject('none', {}))).rejects.toMatchObject({
      code: 'TRUST_ROOT_INVALID',
    });
  });

  it('resolve by name once, the public-good root for no name, and report unknown names', async () => {
    let calls = 0;
    const resolver = trustRootResolver([trustRootObject('inline', sigstoreKeysFor(infra)), infra.trustRoot], {
      tufClient: async () => {
        calls++;
        return { content: '', expires: new Date('2099-01-01'), verified: new Map() };
      },
    });
    const first = await resolver('inline');
    expect(await resolver('inline')).toBe(first);
    expect(await resolver('mock')).toBe(infra.trustRoot);
    expect((await resolver(undefined)).name).toBe('public-good');
    await expect(resolver('missing')).rejects.toMatchObject({
      code: 'TRUST_ROOT_NOT_FOUND',
      message: 'TrustRoot "missing": no TrustRoot of that name',
    });
    expect(calls).toBe(0);
    const clocked = trustRootResolver([], { clock: () => new Date(5) });
    expect((await clocked(undefined)).loadedAt).toEqual(new Date(5));
  });
});
