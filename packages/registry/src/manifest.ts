// Manifests and indexes as the registry layer reads them: JSON validated at the boundary into
// typed descriptors, so nothing downstream handles `unknown`. Only the fields Signet uses are kept.
import { isDigest } from './digest.js';
import { RegistryError, type RegistryErrorContext } from './errors.js';
import { essence, IMAGE_MANIFEST_TYPES, INDEX_TYPES } from './media-types.js';

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  /** Empty when the descriptor has none. */
  readonly annotations: Readonly<Record<string, string>>;
  readonly artifactType: string | undefined;
  /**
   * For an index's entry, the platform it lists the manifest for, as go-containerregistry writes
   * one (`linux/arm64/v8`, `windows/amd64:10.0.17763`); absent when the entry names none.
   */
  readonly platform?: string;
}

interface ManifestFields {
  readonly mediaType: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly artifactType: string | undefined;
  readonly subject: Descriptor | undefined;
}

export interface ImageManifest extends ManifestFields {
  readonly kind: 'manifest';
  readonly config: Descriptor;
  readonly layers: readonly Descriptor[];
}

export interface ImageIndex extends ManifestFields {
  readonly kind: 'index';
  readonly manifests: readonly Descriptor[];
}

export type Manifest = ImageManifest | ImageIndex;

type JsonObject = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class Reader {
  readonly #context: RegistryErrorContext;
  readonly #what: string;

  constructor(context: RegistryErrorContext, what: string) {
    this.#context = context;
    this.#what = what;
  }

  fail(path: string, problem: string): never {
    throw new RegistryError('MALFORMED', this.#context, `${this.#what}: ${path} ${problem}`);
  }

  optionalString(object: JsonObject, key: string, path: string): string | undefined {
    const value = object[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') this.fail(`${path}${key}`, 'is not a string');
    return value;
  }

  annotations(object: JsonObject, path: string): Readonly<Record<string, string>> {
    const value = object.annotations;
    if (value === undefined || value === null) return {};
    if (!isObject(value)) this.fail(`${path}annotations`, 'is not an object');
    for (const [key, annotation] of Object.entries(value)) {
      if (typeof annotation !== 'string')
        this.fail(`${path}annotations[${JSON.stringify(key)}]`, 'is not a string');
    }
    return value as Readonly<Record<string, string>>;
  }

  descriptor(value: unknown, path: string): Descriptor {
    if (!isObject(value)) this.fail(path, 'is not an object');
    const mediaType = this.optionalString(value, 'mediaType', `${path}.`);
    if (mediaType === undefined || mediaType === '') this.fail(`${path}.mediaType`, 'is missing');
    const digest = this.optionalString(value, 'digest', `${path}.`);
    if (digest === undefined || !isDigest(digest))
      this.fail(`${path}.digest`, 'is not a sha256/sha384/sha512 digest');
    const size = value.size;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
      this.fail(`${path}.size`, 'is not a non-negative integer');
    }
    const platform = this.platform(value.platform, `${path}.platform`);
    return {
      mediaType,
      digest,
      size,
      annotations: this.annotations(value, `${path}.`),
      artifactType: this.optionalString(value, 'artifactType', `${path}.`),
      ...(platform === undefined ? {} : { platform }),
    };
  }

  /** `os/architecture[/variant][:os.version]`; `undefined` when there is no platform object. */
  platform(value: unknown, path: string): string | undefined {
    if (value === undefined || value === null) return undefined;
    if (!isObject(value)) this.fail(path, 'is not an object');
    const part = (key: string) => this.optionalString(value, key, `${path}.`) ?? '';
    const [os, architecture, variant, version] = ['os', 'architecture', 'variant', 'os.version'].map(part);
    return `${os}/${architecture}${variant ? `/${variant}` : ''}${version ? `:${version}` : ''}`;
  }

  descriptors(object: JsonObject, key: string): Descriptor[] {
    const value = object[key] ?? [];
    if (!Array.isArray(value)) this.fail(key, 'is not an array');
    return value.map((item, index) => this.descriptor(item, `${key}[${index}]`));
  }
}

/**
 * Parses manifest bytes. The media type is the document's `mediaType`, else the Content-Type
 * header. Throws `MALFORMED` for invalid JSON, schema 1 or unknown media types, and bad fields.
 * `what` names the manifest in messages (`manifest sha256:...`).
 */
export function parseManifest(
  bytes: Uint8Array,
  contentType: string | null,
  context: RegistryErrorContext,
  what: string,
): Manifest {
  const reader: Reader = new Reader(context, what);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    throw new RegistryError('MALFORMED', context, `${what} is not valid JSON`, { cause: error });
  }
  if (!isObject(json)) reader.fail('the document', 'is not a JSON object');
  if (json.schemaVersion !== 2)
    reader.fail('schemaVersion', 'is not 2 (schema 1 manifests are not supported)');
  const mediaType = reader.optionalString(json, 'mediaType', '') ?? essence(contentType);
  const fields = {
    mediaType,
    annotations: reader.annotations(json, ''),
    artifactType: reader.optionalString(json, 'artifactType', ''),
    subject: json.subject === undefined ? undefined : reader.descriptor(json.subject, 'subject'),
  };
  if (IMAGE_MANIFEST_TYPES.has(mediaType)) {
    return {
      kind: 'manifest',
      ...fields,
      config: reader.descriptor(json.config, 'config'),
      layers: reader.descriptors(json, 'layers'),
    };
  }
  if (INDEX_TYPES.has(mediaType)) {
    return { kind: 'index', ...fields, manifests: reader.descriptors(json, 'manifests') };
  }
  return reader.fail('mediaType', `${JSON.stringify(mediaType)} is not an image manifest or index`);
}
