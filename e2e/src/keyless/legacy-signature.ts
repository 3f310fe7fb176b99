// cosign's legacy signature format, written without cosign: an OCI manifest tagged
// `sha256-<hex>.sig` in the image's repository whose one layer is the simple-signing payload, with
// the signature, the certificate (and chain) and the Rekor SET as layer annotations. Pushed with
// the registry API (the loopback registries speak plain HTTP and need no authentication).
import { createHash, sign } from 'node:crypto';
import type { KeylessIdentity, TestSigstore } from './test-sigstore.js';

const SIMPLE_SIGNING = 'application/vnd.dev.cosign.simplesigning.v1+json';
const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';

const sha256 = (data: Buffer) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

/** `127.0.0.1:5000/keyless/app@sha256:...` -> its parts. */
function parseDigestReference(reference: string): { host: string; repository: string; digest: string } {
  const match = /^([^/]+)\/(.+)@(sha256:[0-9a-f]{64})$/.exec(reference);
  if (!match?.[1] || !match[2] || !match[3]) throw new Error(`not a digest reference: ${reference}`);
  return { host: match[1], repository: match[2], digest: match[3] };
}

async function expectStatus(response: Response, wanted: number, what: string): Promise<void> {
  if (response.status !== wanted) {
    throw new Error(`${what}: HTTP ${response.status} ${await response.text().catch(() => '')}`);
  }
}

async function pushBlob(base: string, repository: string, data: Buffer): Promise<string> {
  const digest = sha256(data);
  const started = await fetch(`${base}/v2/${repository}/blobs/uploads/`, { method: 'POST' });
  await expectStatus(started, 202, `starting a blob upload to ${repository}`);
  const location = new URL(started.headers.get('location') ?? '', base);
  location.searchParams.set('digest', digest);
  const put = await fetch(location, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream' },
    body: data,
  });
  await expectStatus(put, 201, `uploading blob ${digest} to ${repository}`);
  return digest;
}

/** The simple-signing payload cosign signs: the image's digest and name. */
export function simpleSigningPayload(reference: string): Buffer {
  const { host, repository, digest } = parseDigestReference(reference);
  return Buffer.from(
    JSON.stringify({
      critical: {
        identity: { 'docker-reference': `${host}/${repository}` },
        image: { 'docker-manifest-digest': digest },
        type: 'cosign container image signature',
      },
      optional: null,
    }),
  );
}

/**
 * Signs `reference` (a digest reference in a plain-HTTP loopback registry) "keyless": an ephemeral
 * key certified by the test CA for `identity`, the signature logged in the test Rekor, and the
 * result stored as cosign's `.sig` tag. Returns the tag's reference.
 */
export async function signKeylessLegacy(
  sigstore: TestSigstore,
  reference: string,
  identity: KeylessIdentity,
): Promise<string> {
  const { host, repository, digest } = parseDigestReference(reference);
  const base = `http://${host}`;
  const payload = simpleSigningPayload(reference);
  const signer = sigstore.certify(identity);
  const signature = sign('sha256', payload, signer.privateKey);
  const entry = sigstore.logHashedRekord(payload, signature, signer.certificatePem);
  const payloadDigest = await pushBlob(base, repository, payload);
  const config = Buffer.from(
    JSON.stringify({
      architecture: '',
      os: '',
      config: {},
      rootfs: { type: 'layers', diff_ids: [payloadDigest] },
    }),
  );
  const configDigest = await pushBlob(base, repository, config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: OCI_CONFIG, size: config.length, digest: configDigest },
      layers: [
        {
          mediaType: SIMPLE_SIGNING,
          size: payload.length,
          digest: payloadDigest,
          annotations: {
            'dev.cosignproject.cosign/signature': signature.toString('base64'),
            'dev.sigstore.cosign/certificate': signer.certificatePem,
            'dev.sigstore.cosign/chain': sigstore.caCertificatePem,
            'dev.sigstore.cosign/bundle': entry.annotation,
          },
        },
      ],
    }),
  );
  const tag = `${digest.replace(':', '-')}.sig`;
  const put = await fetch(`${base}/v2/${repository}/manifests/${tag}`, {
    method: 'PUT',
    headers: { 'content-type': OCI_MANIFEST },
    body: manifest,
  });
  await expectStatus(put, 201, `pushing ${repository}:${tag}`);
  return `${host}/${repository}:${tag}`;
}
