import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { RegistryError } from '../src/errors.js';
import { parseManifest } from '../src/manifest.js';

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
const DIGEST = `sha256:${'a'.repeat(64)}`;
const context = { registry: 'r.test', repository: 'app' };
const descriptor = { mediaType: 'application/octet-stream', digest: DIGEST, size: 3 };

const bytes = (value: unknown) =>
  new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));
const parse = (value: unknown, contentType: string | null = null) =>
  parseManifest(bytes(value), contentType, context, 'manifest v1');

describe('parseManifest', () => {
  it('reads an OCI image manifest with subject, artifactType and annotations', () => {
    const manifest = parse({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      artifactType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
      config: descriptor,
      layers: [{ ...descriptor, annotations: { a: 'b' } }],
      subject: { ...descriptor, mediaType: OCI_MANIFEST },
      annotations: { 'dev.sigstore.bundle.predicateType': 'x' },
    });
    expect(manifest).toEqual({
      kind: 'manifest',
      mediaType: OCI_MANIFEST,
      artifactType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
      annotations: { 'dev.sigstore.bundle.predicateType': 'x' },
      subject: { ...descriptor, mediaType: OCI_MANIFEST, annotations: {}, artifactType: undefined },
      config: { ...descriptor, annotations: {}, artifactType: undefined },
      layers: [{ ...descriptor, annotations: { a: 'b' }, artifactType: undefined }],
    });
  });

  it('takes the media type from Content-Type when the document has none', () => {
    expect(parse({ schemaVersion: 2, manifests: [] }, `${OCI_INDEX}; charset=utf-8`)).toMatchObject({
      kind: 'index',
      mediaType: OCI_INDEX,
      manifests: [],
    });
  });

  it('reads Docker schema 2 manifests and lists, with null annotations and null lists', () => {
    expect(
      parse({
        schemaVersion: 2,
        mediaType: DOCKER_MANIFEST,
        config: descriptor,
        layers: null,
        annotations: null,
      }),
    ).toMatchObject({ kind: 'manifest', layers: [], annotations: {} });
    const list = parse({
      schemaVersion: 2,
      mediaType: 'application/vnd.docker.distribution.manifest.list.v2+json',
      manifests: [descriptor],
    });
    expect(list.kind).toBe('index');
  });

  it("names each index entry's platform as go-containerregistry writes it, when the entry has one", () => {
    const index = parse({
      schemaVersion: 2,
      mediaType: OCI_INDEX,
      manifests: [
        { ...descriptor, platform: { os: 'linux', architecture: 'amd64' } },
        { ...descriptor, platform: { os: 'linux', architecture: 'arm', variant: 'v7' } },
        { ...descriptor, platform: { os: 'windows', architecture: 'amd64', 'os.version': '10.0.17763' } },
        { ...descriptor, platform: null },
        descriptor,
      ],
    });
    expect(index.kind === 'index' && index.manifests.map((m) => m.platform)).toEqual([
      'linux/amd64',
      'linux/arm/v7',
      'windows/amd64:10.0.17763',
      undefined,
      undefined,
    ]);
    expect(index.kind === 'index' && 'platform' in (index.manifests[4] ?? {})).toBe(false);
  });

  const malformed: [string, unknown, string][] = [
    ['invalid JSON', '{', 'manifest v1 is not valid JSON'],
    ['invalid UTF-8', new Uint8Array([0xff, 0xfe]), 'manifest v1 is not valid JSON'],
    ['an array', [], 'the document is not a JSON object'],
    ['schema 1', { schemaVersion: 1, mediaType: OCI_MANIFEST }, 'schemaVersion is not 2'],
    [
      'an unknown media type',
      { schemaVersion: 2, mediaType: 'text/plain' },
      'mediaType "text/plain" is not an image manifest or index',
    ],
    ['no media type at all', { schemaVersion: 2 }, 'mediaType "" is not an image manifest or index'],
    ['a numeric media type', { schemaVersion: 2, mediaType: 7 }, 'mediaType is not a string'],
    [
      'a missing config',
      { schemaVersion: 2, mediaType: OCI_MANIFEST, layers: [] },
      'config is not an object',
    ],
    [
      'layers that are not a list',
      { schemaVersion: 2, mediaType: OCI_MANIFEST, config: descriptor, layers: {} },
      'layers is not an array',
    ],
    [
      'a descriptor without media type',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [{ digest: DIGEST, size: 1 }] },
      'manifests[0].mediaType is missing',
    ],
    [
      'a bad digest',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [{ ...descriptor, digest: 'sha256:ABC' }] },
      'manifests[0].digest is not a sha256/sha384/sha512 digest',
    ],
    [
      'a missing digest',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [{ mediaType: 'x', size: 1 }] },
      'manifests[0].digest is not',
    ],
    [
      'a negative size',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [{ ...descriptor, size: -1 }] },
      'manifests[0].size is not a non-negative integer',
    ],
    [
      'a fractional size',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [{ ...descriptor, size: 1.5 }] },
      'manifests[0].size',
    ],
    [
      'a string size',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [{ ...descriptor, size: '1' }] },
      'manifests[0].size',
    ],
    [
      'a platform that is not an object',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [{ ...descriptor, platform: 'linux/amd64' }] },
      'manifests[0].platform is not an object',
    ],
    [
      'a platform whose os is not a string',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [{ ...descriptor, platform: { os: 1 } }] },
      'manifests[0].platform.os is not a string',
    ],
    [
      'annotations that are a list',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [], annotations: [] },
      'annotations is not an object',
    ],
    [
      'a numeric annotation',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [{ ...descriptor, annotations: { n: 1 } }] },
      'manifests[0].annotations["n"] is not a string',
    ],
    [
      'a numeric artifactType',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [], artifactType: 1 },
      'artifactType is not a string',
    ],
    [
      'a bad subject',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [], subject: 'x' },
      'subject is not an object',
    ],
  ];
  it.each(malformed)('refuses %s', (_name, document, message) => {
    let caught: unknown;
    try {
      parseManifest(
        document instanceof Uint8Array ? document : bytes(document),
        null,
        context,
        'manifest v1',
      );
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RegistryError);
    expect((caught as RegistryError).code).toBe('MALFORMED');
    expect((caught as RegistryError).message).toContain(message);
    expect((caught as RegistryError).message.startsWith('registry r.test repository app: ')).toBe(true);
  });

  test.prop([fc.jsonValue()])('throws nothing but MALFORMED on arbitrary JSON', (value) => {
    try {
      parse(value, OCI_MANIFEST);
    } catch (error) {
      expect(error).toBeInstanceOf(RegistryError);
      expect((error as RegistryError).code).toBe('MALFORMED');
    }
  });
});
