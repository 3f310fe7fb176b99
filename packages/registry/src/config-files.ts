// The image config files a spec-level policy with `fetchConfigFile` sees, keyed by platform as
// policy-controller keys them (`{os}/{architecture}[/{variant}][:{osVersion}]`, go-containerregistry's
// Platform.String): one for an image, one per manifest of an index (nested indexes followed). Bounded:
// at most `maxManifests` manifests in all, each config at most `maxConfigBytes`.

import type { RegistryClient } from './client.js';
import type { RegistryCall } from './deadline.js';
import { RegistryError } from './errors.js';
import type { DigestRef } from './references.js';

export interface ConfigFileLimits {
  readonly maxManifests: number;
  readonly maxConfigBytes: number;
}

const DEFAULT_LIMITS: ConfigFileLimits = { maxManifests: 64, maxConfigBytes: 1024 * 1024 };

type JsonObject = Record<string, unknown>;

const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** go-containerregistry's `v1.Platform.String()` of a config file. */
export function platformOf(config: JsonObject): string {
  const os = text(config.os);
  if (os === '') return '';
  const arch = text(config.architecture);
  const variant = text(config.variant);
  const version = text(config['os.version']);
  return `${os}${arch ? `/${arch}` : ''}${variant ? `/${variant}` : ''}${version ? `:${version}` : ''}`;
}

/** Config files by platform for `image` (a digest). Throws `RegistryError`. */
export async function fetchConfigFiles(
  client: RegistryClient,
  image: DigestRef,
  call: RegistryCall,
  limits: ConfigFileLimits = DEFAULT_LIMITS,
): Promise<Record<string, JsonObject>> {
  const configs: Record<string, JsonObject> = {};
  const pending = [image.digest];
  let seen = 0;
  while (pending.length > 0) {
    const digest = pending.shift() as string;
    seen += 1;
    if (seen > limits.maxManifests) {
      throw new RegistryError('MALFORMED', image, `the image has more than ${limits.maxManifests} manifests`);
    }
    const { manifest } = await client.getManifest(image, digest, call);
    if (manifest.kind === 'index') {
      pending.push(...manifest.manifests.map((m) => m.digest));
      continue;
    }
    const bytes = await client.getBlob(image, manifest.config.digest, call, {
      maxBytes: limits.maxConfigBytes,
    });
    let config: unknown;
    try {
      config = JSON.parse(Buffer.from(bytes).toString('utf8'));
    } catch (error) {
      throw new RegistryError('MALFORMED', image, `config ${manifest.config.digest} is not JSON`, {
        cause: error,
      });
    }
    if (typeof config !== 'object' || config === null || Array.isArray(config)) {
      throw new RegistryError('MALFORMED', image, `config ${manifest.config.digest} is not a JSON object`);
    }
    configs[platformOf(config as JsonObject)] = config as JsonObject;
  }
  return configs;
}
