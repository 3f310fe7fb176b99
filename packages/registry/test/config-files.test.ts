// Config files for fetchConfigFile, on the in-memory registry (its edge cases: a config that is
// not JSON, an index too large); the real-registry path is in upstream-policies.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { RegistryClient } from '../src/client.js';
import { fetchConfigFiles, platformOf } from '../src/config-files.js';
import { MemoryRegistry, OCI_INDEX, OCI_MANIFEST } from './helpers/memory-registry.js';
import { callWithin, startServer, type TestServer } from './helpers/server.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function setup() {
  const memory = new MemoryRegistry();
  const server = await startServer(memory.handler);
  servers.push(server);
  const client = new RegistryClient({
    insecureHosts: [server.host],
    retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
  });
  const image = (config: string, tag: string) =>
    memory.pushManifest(
      'team/app',
      {
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: memory.pushBlob('team/app', config, 'application/vnd.oci.image.config.v1+json'),
        layers: [],
      },
      { tag },
    );
  const at = (digest: string) => ({ registry: server.host, repository: 'team/app', digest });
  return { memory, client, image, at };
}

describe('fetchConfigFiles', () => {
  it('keys each config of an index (nested ones too) by platform', async () => {
    const { memory, client, image, at } = await setup();
    const amd = image('{"os":"linux","architecture":"amd64","config":{"User":"1"}}', 'amd');
    const arm = image('{"os":"linux","architecture":"arm","variant":"v7","config":{"User":"2"}}', 'arm');
    const inner = memory.pushManifest(
      'team/app',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [arm] },
      { tag: 'inner' },
    );
    const outer = memory.pushManifest(
      'team/app',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [amd, inner] },
      { tag: 'outer' },
    );
    const configs = await fetchConfigFiles(client, at(outer.digest), callWithin(5_000));
    expect(Object.keys(configs).sort()).toEqual(['linux/amd64', 'linux/arm/v7']);
    expect(configs['linux/arm/v7']).toMatchObject({ config: { User: '2' } });
  });

  it('refuses a config that is not a JSON object, and an index with too many manifests', async () => {
    const { memory, client, image, at } = await setup();
    await expect(
      fetchConfigFiles(client, at(image('not json', 'a').digest), callWithin(5_000)),
    ).rejects.toThrow('is not JSON');
    await expect(fetchConfigFiles(client, at(image('[1]', 'b').digest), callWithin(5_000))).rejects.toThrow(
      'is not a JSON object',
    );
    const one = image('{}', 'c');
    const index = memory.pushManifest(
      'team/app',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [one, one] },
      { tag: 'd' },
    );
    await expect(
      fetchConfigFiles(client, at(index.digest), callWithin(5_000), {
        maxManifests: 2,
        maxConfigBytes: 1024,
      }),
    ).rejects.toThrow('more than 2 manifests');
  });
});

describe('platformOf', () => {
  it("is go-containerregistry's Platform.String()", () => {
    expect(platformOf({})).toBe('');
    expect(platformOf({ os: 'linux' })).toBe('linux');
    expect(platformOf({ os: 'windows', architecture: 'amd64', 'os.version': '10.0.17763.1' })).toBe(
      'windows/amd64:10.0.17763.1',
    );
    expect(platformOf({ os: 'linux', architecture: 7 })).toBe('linux');
  });
});
