// The verification cases of sigstore-conformance (test vectors copied into
// test/fixtures/sigstore-conformance, see SOURCE.md there) run against Signet's signature layer:
// the bundle decoded and checked as an image's bundle is (verifySignature: signature, certificate
// chain, SCTs, transparency-log entries and checkpoints, RFC 3161 timestamps, identities), with
// the requirements of a default keyless authority (or a key authority with `ctlog`), and the
// suite's artifact standing in for the image: a message signature's digest, or an in-toto
// subject, must be its SHA-256. Every case must come out as the suite expects, except the ones in
// EXCLUDED, each with the reason an image verifier differs (also in the verifier's README).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Bundle, bundleFromJSON } from '@sigstore/bundle';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DecodedArtifact } from '../../src/sigstore/decode.js';
import { decodeArtifact } from '../../src/sigstore/decode.js';
import { compileIdentity } from '../../src/sigstore/identity.js';
import { readStatement } from '../../src/sigstore/payload.js';
import { pemBlocks, publicKeyFromBlock } from '../../src/sigstore/pem.js';
import { type SignatureCheck, verifySignature } from '../../src/sigstore/verify.js';
import { publicGoodTrustRoot } from '../../src/trust/public-good.js';
import { type CompiledTrustRoot, trustRootFromJSON } from '../../src/trust/trusted-root.js';

const CASES = fileURLToPath(new URL('../fixtures/sigstore-conformance/bundle-verify/', import.meta.url));
const DEFAULT_IDENTITY =
  'https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main';
const DEFAULT_ISSUER = 'https://token.actions.githubusercontent.com';

/** Cases whose outcome differs from the suite's on purpose; the reasons are in the README too. */
export const EXCLUDED: Readonly<Record<string, string>> = {};

const cases = readdirSync(CASES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

function read(dir: string, name: string): Buffer | undefined {
  const path = join(CASES, dir, name);
  return existsSync(path) ? readFileSync(path) : undefined;
}

/** The bundle as Signet decodes an image's bundle; a message signature keeps the artifact it signs. */
function decode(name: string, bundleJson: Buffer, artifact: Buffer): DecodedArtifact {
  const bundle: Bundle = bundleFromJSON(JSON.parse(bundleJson.toString('utf8')));
  if (bundle.content.$case === 'dsseEnvelope') {
    return decodeArtifact({
      format: 'bundle',
      source: name,
      bundle: bundleJson,
      artifactType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
      predicateType: undefined,
    } as never);
  }
  const material = bundle.verificationMaterial.content;
  return {
    source: name,
    format: 'bundle',
    bundle,
    artifact,
    payload: artifact,
    payloadType: '',
    envelope: undefined,
    extraCertificates:
      material.$case === 'x509CertificateChain' ? material.x509CertificateChain.certificates.length - 1 : 0,
    layerSignature:
      bundle.content.$case === 'messageSignature'
        ? bundle.content.messageSignature.signature
        : Buffer.alloc(0),
    blobDigest: `sha256:${createHash('sha256').update(JSON.stringify(bundleJson)).digest('hex')}`,
  };
}

function checkFor(name: string, root: CompiledTrustRoot): SignatureCheck {
  const { material } = root;
  const trust = {
    certificateAuthorities: material.certificateAuthorities,
    ctlogs: material.ctlogs,
    tlogs: material.tlogs,
    timestampAuthorities: material.timestampAuthorities,
  };
  const key = read(name, 'key.pub');
  if (key !== undefined) {
    const [block] = pemBlocks(key.toString('utf8'));
    if (block === undefined) throw new Error('no key');
    return {
      signer: {
        type: 'key',
        keys: [{ name: 'key.pub', key: publicKeyFromBlock(block) }],
        hashAlgorithm: undefined,
      },
      requirements: { tlog: true, timestampAuthority: false, sct: false },
      trust,
    };
  }
  const identity = compileIdentity({
    issuer: read(name, 'issuer')?.toString('utf8').trim() ?? DEFAULT_ISSUER,
    subject: read(name, 'identity')?.toString('utf8').trim() ?? DEFAULT_IDENTITY,
  });
  return {
    signer: { type: 'keyless', identities: [identity] },
    requirements: { tlog: true, timestampAuthority: false, sct: true },
    trust,
  };
}

/** `pass`, or `fail: <why>`. */
function run(name: string, publicGood: CompiledTrustRoot): string {
  try {
    const artifact = read(name, 'artifact') ?? readFileSync(join(CASES, 'a.txt'));
    const bundleJson = read(name, 'bundle.sigstore.json');
    if (bundleJson === undefined) throw new Error('no bundle');
    const custom = read(name, 'trusted_root.json');
    const root = custom === undefined ? publicGood : trustRootFromJSON(custom, { name });
    const decoded = decode(name, bundleJson, artifact);
    verifySignature(decoded, checkFor(name, root));
    if (decoded.payloadType !== '') {
      const digest = createHash('sha256').update(artifact).digest('hex');
      const statement = readStatement(decoded.payloadType, decoded.payload);
      if (!statement.subject.some((subject) => subject.digest.sha256 === digest)) {
        throw new Error('no in-toto subject is the artifact');
      }
    }
    return 'pass';
  } catch (error) {
    return `fail: ${(error as Error).message}`;
  }
}

describe('sigstore-conformance verification cases', () => {
  let publicGood: CompiledTrustRoot;
  beforeAll(async () => {
    publicGood = await publicGoodTrustRoot();
  });

  it('has the cases of the copied suite', () => {
    expect(cases.length).toBeGreaterThanOrEqual(70);
  });

  it.each(cases.filter((name) => EXCLUDED[name] === undefined))('%s', (name) => {
    const outcome = run(name, publicGood);
    if (name.endsWith('_fail')) expect(outcome).toMatch(/^fail: /);
    else expect(outcome).toBe('pass');
  });
});
