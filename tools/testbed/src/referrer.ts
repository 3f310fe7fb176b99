// Pushes an OCI 1.1 artifact manifest whose `subject` is an image, through the distribution API,
// for artifacts no CLI here writes in that shape (an in-toto attestation referrer as Google Cloud
// Build attaches one). Registries with the referrers API list it under the subject.
import { createHash } from 'node:crypto';
import { TestbedError } from './errors.js';
import type { Registry } from './registry.js';

export interface ReferrerLayer {
  readonly mediaType: string;
  readonly content: Uint8Array;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface ReferrerOptions {
  readonly artifactType: string;
  readonly layers: readonly ReferrerLayer[];
  readonly timeoutMs?: number;
}

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const EMPTY = { mediaType: 'application/vnd.oci.empty.v1+json', content: Buffer.from('{}') };

const sha256 = (bytes: Uint8Array) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/** Pushes the artifact into `repo` with `subjectDigest` (a manifest of `repo`) as subject; returns its digest. */
export async function pushReferrer(
  registry: Pick<Registry, 'url'>,
  repo: string,
  subjectDigest: string,
  options: ReferrerOptions,
): Promise<string> {
  const signal = () => AbortSignal.timeout(options.timeoutMs ?? 30_000);
  const base = `${registry.url}/v2/${repo}`;
  const subject = await fetch(`${base}/manifests/${subjectDigest}`, {
    headers: { accept: `${OCI_MANIFEST}, application/vnd.oci.image.index.v1+json` },
    signal: signal(),
  });
  const subjectBytes = Buffer.from(await subject.arrayBuffer());
  if (!subject.ok)
    throw new TestbedError('COMMAND_FAILED', `GET ${repo}@${subjectDigest}: HTTP ${subject.status}`);
  const subjectType =
    (JSON.parse(subjectBytes.toString('utf8')) as { mediaType?: string }).mediaType ?? OCI_MANIFEST;
  const upload = async (content: Uint8Array) => {
    const started = await fetch(`${base}/blobs/uploads/`, { method: 'POST', signal: signal() });
    const location = started.headers.get('location');
    if (started.status !== 202 || location === null) {
      throw new TestbedError('COMMAND_FAILED', `POST ${repo} blob upload: HTTP ${started.status}`);
    }
    const url = new URL(location, registry.url);
    url.searchParams.set('digest', sha256(content));
    const put = await fetch(url, {
      method: 'PUT',
      body: content,
      headers: { 'content-type': 'application/octet-stream' },
      signal: signal(),
    });
    if (put.status !== 201) throw new TestbedError('COMMAND_FAILED', `PUT ${repo} blob: HTTP ${put.status}`);
  };
  const descriptor = (layer: ReferrerLayer) => ({
    mediaType: layer.mediaType,
    digest: sha256(layer.content),
    size: layer.content.length,
    ...(layer.annotations ? { annotations: layer.annotations } : {}),
  });
  await upload(EMPTY.content);
  for (const layer of options.layers) await upload(layer.content);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      artifactType: options.artifactType,
      config: descriptor(EMPTY),
      layers: options.layers.map(descriptor),
      subject: { mediaType: subjectType, digest: subjectDigest, size: subjectBytes.length },
    }),
  );
  const digest = sha256(manifest);
  const put = await fetch(`${base}/manifests/${digest}`, {
    method: 'PUT',
    body: manifest,
    headers: { 'content-type': OCI_MANIFEST },
    signal: signal(),
  });
  if (put.status !== 201) {
    throw new TestbedError(
      'COMMAND_FAILED',
      `PUT ${repo} referrer manifest: HTTP ${put.status} ${await put.text()}`,
    );
  }
  return digest;
}
