// An in-memory registry for tests of the client and of discovery: manifests, tags, blobs and
// (optionally) the referrers API, served by the test server. Fast and fully controllable; the
// real-registry tests check the same paths against distribution and an OCI 1.1 registry.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './server.js';

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const OCI_EMPTY = 'application/vnd.oci.empty.v1+json';

export interface PushedDescriptor {
  mediaType: string;
  digest: string;
  size: number;
  artifactType?: string;
  annotations?: Record<string, string>;
}

export const sha256 = (bytes: Uint8Array | string) =>
  `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

interface StoredManifest {
  readonly bytes: Buffer;
  readonly mediaType: string;
  readonly json: Record<string, unknown>;
}

export class MemoryRegistry {
  readonly manifests = new Map<string, StoredManifest>();
  readonly tags = new Map<string, string>();
  readonly blobs = new Map<string, Buffer>();
  /** Serve `GET /v2/<name>/referrers/<digest>` (else 404, as distribution does). */
  referrersApi = true;

  pushBlob(
    repo: string,
    content: string | Uint8Array,
    mediaType = 'application/octet-stream',
  ): PushedDescriptor {
    const bytes = Buffer.from(content);
    const digest = sha256(bytes);
    this.blobs.set(`${repo}@${digest}`, bytes);
    return { mediaType, digest, size: bytes.length };
  }

  pushManifest(
    repo: string,
    json: Record<string, unknown>,
    options: { tag?: string; mediaType?: string } = {},
  ): PushedDescriptor {
    const bytes = Buffer.from(JSON.stringify(json));
    const digest = sha256(bytes);
    const mediaType = options.mediaType ?? (json.mediaType as string | undefined) ?? OCI_MANIFEST;
    this.manifests.set(`${repo}@${digest}`, { bytes, mediaType, json });
    if (options.tag !== undefined) this.tags.set(`${repo}:${options.tag}`, digest);
    return { mediaType, digest, size: bytes.length };
  }

  /** An image with one random layer, tagged `tag`. */
  pushImage(repo: string, tag: string): PushedDescriptor {
    const config = this.pushBlob(repo, '{}', 'application/vnd.oci.image.config.v1+json');
    const layer = this.pushBlob(repo, `layer ${Math.random()}`, 'application/vnd.oci.image.layer.v1.tar');
    return this.pushManifest(
      repo,
      { schemaVersion: 2, mediaType: OCI_MANIFEST, config, layers: [layer] },
      { tag },
    );
  }

  readonly handler = (request: IncomingMessage, response: ServerResponse): void => {
    const url = new URL(request.url ?? '/', 'http://registry');
    const match = /^\/v2\/(.+)\/(manifests|blobs|referrers)\/([^/]+)$/.exec(url.pathname);
    const [, repo = '', kind, reference = ''] = match ?? [];
    if (kind === 'manifests') this.#manifest(request, response, repo, reference);
    else if (kind === 'blobs') this.#blob(response, repo, reference);
    else if (kind === 'referrers')
      this.#referrers(response, repo, reference, url.searchParams.get('artifactType'));
    else sendJson(response, 404, { errors: [{ code: 'NAME_UNKNOWN' }] });
  };

  #manifest(request: IncomingMessage, response: ServerResponse, repo: string, reference: string): void {
    const digest = reference.includes(':') ? reference : this.tags.get(`${repo}:${reference}`);
    const stored = digest === undefined ? undefined : this.manifests.get(`${repo}@${digest}`);
    if (digest === undefined || stored === undefined) {
      sendJson(response, 404, { errors: [{ code: 'MANIFEST_UNKNOWN', message: 'manifest unknown' }] });
      return;
    }
    response.writeHead(200, {
      'content-type': stored.mediaType,
      'content-length': stored.bytes.length,
      'docker-content-digest': digest,
    });
    response.end(request.method === 'HEAD' ? undefined : stored.bytes);
  }

  #blob(response: ServerResponse, repo: string, digest: string): void {
    const bytes = this.blobs.get(`${repo}@${digest}`);
    if (bytes === undefined) {
      sendJson(response, 404, { errors: [{ code: 'BLOB_UNKNOWN' }] });
      return;
    }
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
    response.end(bytes);
  }

  #referrers(response: ServerResponse, repo: string, digest: string, artifactType: string | null): void {
    if (!this.referrersApi) {
      sendJson(response, 404, { errors: [{ code: 'UNSUPPORTED' }] });
      return;
    }
    const manifests: PushedDescriptor[] = [];
    for (const [key, stored] of this.manifests) {
      const subject = stored.json.subject as { digest?: string } | undefined;
      if (!key.startsWith(`${repo}@`) || subject?.digest !== digest) continue;
      const config = stored.json.config as { mediaType?: string } | undefined;
      const type = (stored.json.artifactType as string | undefined) ?? config?.mediaType;
      if (artifactType !== null && type !== artifactType) continue;
      manifests.push({
        mediaType: stored.mediaType,
        digest: key.slice(repo.length + 1),
        size: stored.bytes.length,
        ...(type === undefined ? {} : { artifactType: type }),
        ...(stored.json.annotations
          ? { annotations: stored.json.annotations as Record<string, string> }
          : {}),
      });
    }
    sendJson(
      response,
      200,
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests },
      { 'content-type': OCI_INDEX },
    );
  }
}
