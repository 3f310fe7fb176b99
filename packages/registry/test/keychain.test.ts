import { describe, expect, it } from 'vitest';
import { Keychain } from '../src/keychain.js';
import {
  type CredentialEntry,
  credentialsFromDockerConfig,
  credentialsFromSecret,
  PullSecretError,
  type RegistryCredential,
} from '../src/pull-secrets.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const user = (name: string): RegistryCredential => ({
  kind: 'basic',
  username: name,
  password: `${name}-pw`,
});
const entry = (key: string, name: string): CredentialEntry => ({
  key,
  credential: user(name),
  origin: 'test',
});

function dockerConfigJsonSecret(auths: unknown, name = 'regcred', namespace = 'team'): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
  };
}

describe('Keychain matching', () => {
  const dockerHub = { registry: 'index.docker.io', repository: 'library/alpine' };

  it.each([
    'https://index.docker.io/v1/',
    'https://index.docker.io/v1',
    'index.docker.io',
    'docker.io',
    'https://docker.io',
    'registry-1.docker.io',
    'https://registry-1.docker.io/v2/',
    'registry.hub.docker.com',
    'INDEX.DOCKER.IO',
  ])('Docker Hub key %s matches index.docker.io images', (key) => {
    const keychain = new Keychain([entry(key, 'hub')]);
    expect(keychain.credentialFor(dockerHub)).toEqual(user('hub'));
    expect(keychain.credentialFor({ registry: 'docker.io', repository: 'library/alpine' })).toEqual(
      user('hub'),
    );
    expect(keychain.credentialFor({ registry: 'quay.io', repository: 'library/alpine' })).toBeUndefined();
  });

  it.each([
    ['registry.local:5000', 'registry.local:5000', true],
    ['registry.local:5000', 'registry.local', false],
    ['registry.local', 'registry.local:5000', false],
    ['https://registry.local:5000/v2/', 'registry.local:5000', true],
    ['http://registry.local:5000', 'registry.local:5000', true],
    ['registry.local:5000/', 'registry.local:5000', true],
    ['Registry.Local', 'registry.local', true],
    ['[::1]:5000', '[::1]:5000', true],
    ['127.0.0.1:5000', '127.0.0.1:5001', false],
    ['*.example.com', 'registry.example.com', true],
    ['*.example.com', 'a.registry.example.com', false],
    ['*.example.com', 'example.com', false],
    ['reg-*.example.com', 'reg-eu.example.com', true],
    ['reg-*.example.com', 'other.example.com', false],
    ['registry.example.com', 'registry-example.com', false],
    ['registry.example.com', 'registryxexample.com', false],
  ])('key %s for registry %s: %s', (key, registry, matches) => {
    const keychain = new Keychain([entry(key, 'x')]);
    expect(keychain.credentialFor({ registry, repository: 'app' }) !== undefined).toBe(matches);
  });

  it.each([
    ['registry.local/team', 'team/app', true],
    ['registry.local/team', 'team', true],
    ['registry.local/team', 'team-b/app', false],
    ['registry.local/team', 'other/team', false],
    ['https://registry.local/team/app/', 'team/app/sub', true],
    ['registry.local/v2/team', 'team/app', true],
    ['registry.local/v1', 'anything', true],
    ['registry.local/v10', 'anything', false],
  ])('key %s for repository %s: %s', (key, repository, matches) => {
    const keychain = new Keychain([entry(key, 'x')]);
    expect(keychain.credentialFor({ registry: 'registry.local', repository }) !== undefined).toBe(matches);
  });

  it('picks the most specific key whatever the order', () => {
    const entries = [
      entry('*.local', 'wildcard'),
      entry('registry.local', 'host'),
      entry('registry.local/team', 'team'),
      entry('https://registry.local/team/app', 'app'),
    ];
    for (const order of [entries, [...entries].reverse()]) {
      const keychain = new Keychain(order);
      const find = (repository: string) =>
        keychain.credentialFor({ registry: 'registry.local', repository }) as
          | { username: string }
          | undefined;
      expect(find('team/app/worker')?.username).toBe('app');
      expect(find('team/other')?.username).toBe('team');
      expect(find('elsewhere/app')?.username).toBe('host');
      expect(keychain.credentialFor({ registry: 'other.local', repository: 'x' })).toEqual(user('wildcard'));
    }
  });

  it('keeps the first of two identical keys (imagePullSecrets order)', () => {
    const keychain = Keychain.fromSecrets([
      dockerConfigJsonSecret({ 'registry.local': { username: 'first', password: 'a' } }, 'one'),
      dockerConfigJsonSecret({ 'https://registry.local/v1/': { username: 'second', password: 'b' } }, 'two'),
    ]);
    const found = keychain.entryFor({ registry: 'registry.local', repository: 'app' });
    expect(found?.credential).toMatchObject({ username: 'first' });
    expect(found?.origin).toBe('Secret team/one');
  });

  it('answers undefined with no entries', () => {
    expect(new Keychain([]).credentialFor({ registry: 'r.local', repository: 'a' })).toBeUndefined();
  });
});

describe('pull secrets', () => {
  it('reads auth, username/password and identitytoken from a dockerconfigjson Secret', () => {
    const entries = credentialsFromSecret(
      dockerConfigJsonSecret({
        'https://index.docker.io/v1/': { auth: b64('alice:pa:ss'), email: 'a@example.com' },
        'registry.local:5000': { username: 'bob', password: 'pw' },
        'token.example': { identitytoken: 'refresh', auth: b64('carol:') },
        'token-only.example': { identitytoken: 'refresh2' },
        'password-only.example': { password: 'pw' },
        'helper.example': {},
      }),
    );
    expect(entries).toEqual([
      {
        key: 'https://index.docker.io/v1/',
        credential: { kind: 'basic', username: 'alice', password: 'pa:ss' },
        origin: 'Secret team/regcred',
      },
      {
        key: 'registry.local:5000',
        credential: { kind: 'basic', username: 'bob', password: 'pw' },
        origin: 'Secret team/regcred',
      },
      {
        key: 'token.example',
        credential: { kind: 'identity-token', username: 'carol', token: 'refresh' },
        origin: 'Secret team/regcred',
      },
      {
        key: 'token-only.example',
        credential: { kind: 'identity-token', username: undefined, token: 'refresh2' },
        origin: 'Secret team/regcred',
      },
      {
        key: 'password-only.example',
        credential: { kind: 'basic', username: '', password: 'pw' },
        origin: 'Secret team/regcred',
      },
    ]);
  });

  it('reads a legacy dockercfg Secret (no auths wrapper)', () => {
    const secret = {
      metadata: { name: 'old' },
      type: 'kubernetes.io/dockercfg',
      data: { '.dockercfg': b64(JSON.stringify({ 'registry.local': { auth: b64('u:p'), email: 'x' } })) },
    };
    expect(credentialsFromSecret(secret)).toEqual([
      {
        key: 'registry.local',
        credential: { kind: 'basic', username: 'u', password: 'p' },
        origin: 'Secret old',
      },
    ]);
  });

  it('reads a Docker config.json, as text or parsed', () => {
    const config = { auths: { 'registry.local': { auth: b64('u:p') } }, credsStore: 'desktop' };
    const expected = [
      {
        key: 'registry.local',
        credential: { kind: 'basic', username: 'u', password: 'p' },
        origin: 'docker config',
      },
    ];
    expect(credentialsFromDockerConfig(config)).toEqual(expected);
    expect(credentialsFromDockerConfig(JSON.stringify(config))).toEqual(expected);
    expect(credentialsFromDockerConfig({ credHelpers: {} })).toEqual([]);
    const keychain = Keychain.fromDockerConfig(JSON.stringify(config), '/root/.docker/config.json');
    expect(keychain.entryFor({ registry: 'registry.local', repository: 'a' })?.origin).toBe(
      '/root/.docker/config.json',
    );
  });

  const malformed: [string, unknown, string][] = [
    ['a non-object', 'text', 'Secret <unnamed>: is not an object'],
    [
      'an Opaque Secret',
      { metadata: { name: 'x', namespace: 'ns' }, type: 'Opaque', data: {} },
      'Secret ns/x: has type "Opaque"; a pull secret has type kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg',
    ],
    ['a Secret without type', { metadata: { name: 'x' } }, 'Secret x: has type null'],
    [
      'a missing data key',
      { metadata: { name: 'x' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockercfg': 'e30=' } },
      'Secret x: has no data[".dockerconfigjson"]',
    ],
    [
      'no data at all',
      { metadata: { name: 'x' }, type: 'kubernetes.io/dockercfg' },
      'Secret x: has no data[".dockercfg"]',
    ],
    [
      'data that is not base64',
      {
        metadata: { name: 'x' },
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': '{"auths":{}}' },
      },
      'Secret x: data[".dockerconfigjson"] is not base64',
    ],
    [
      'invalid JSON',
      {
        metadata: { name: 'x' },
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': b64('{"auths": hunter2') },
      },
      'Secret x: data[".dockerconfigjson"] is not valid JSON',
    ],
    [
      'JSON that is not an object',
      {
        metadata: { name: 'x' },
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': b64('[1]') },
      },
      'Secret x: data[".dockerconfigjson"] is not a JSON object',
    ],
    [
      'auths that is not an object',
      dockerConfigJsonSecret([1]),
      'Secret team/regcred: auths is not a JSON object',
    ],
    [
      'an entry that is not an object',
      dockerConfigJsonSecret({ 'r.local': 'hunter2' }),
      'Secret team/regcred: auths["r.local"] is not a JSON object',
    ],
    [
      'auth that is not base64',
      dockerConfigJsonSecret({ 'r.local': { auth: 'hunter2!' } }),
      'Secret team/regcred: auths["r.local"].auth is not the base64 encoding of "username:password"',
    ],
    [
      'auth without a colon',
      dockerConfigJsonSecret({ 'r.local': { auth: b64('hunter2') } }),
      'Secret team/regcred: auths["r.local"].auth is not the base64 encoding of "username:password"',
    ],
    [
      'a username that is not a string',
      dockerConfigJsonSecret({ 'r.local': { username: 7, password: 'hunter2' } }),
      'Secret team/regcred: auths["r.local"].username is not a string',
    ],
  ];
  it.each(malformed)('rejects %s with a message naming the Secret', (_name, secret, message) => {
    let caught: unknown;
    try {
      credentialsFromSecret(secret);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PullSecretError);
    const error = caught as PullSecretError;
    expect(error.message.startsWith(message)).toBe(true);
    expect(error.code).toBe('INVALID_PULL_SECRET');
    expect(error.message).not.toContain('hunter2');
    expect(String(error.cause ?? '')).not.toContain('hunter2');
  });

  it('rejects a legacy dockercfg whose top level is not an object', () => {
    const secret = {
      metadata: { name: 'old' },
      type: 'kubernetes.io/dockercfg',
      data: { '.dockercfg': b64('"x"') },
    };
    expect(() => credentialsFromSecret(secret)).toThrow('Secret old: .dockercfg is not a JSON object');
  });

  it('rejects an unreadable config.json, naming the file', () => {
    expect(() => credentialsFromDockerConfig('{', '/etc/docker.json')).toThrow(
      '/etc/docker.json: the file is not valid JSON',
    );
    expect(() => credentialsFromDockerConfig(null)).toThrow('docker config: the file is not a JSON object');
  });

  it('PullSecretError carries the origin and the problem', () => {
    const error = new PullSecretError('Secret x', 'problem');
    expect(error.message).toBe('Secret x: problem');
    expect(error.name).toBe('PullSecretError');
    expect(error.origin).toBe('Secret x');
    expect(error.problem).toBe('problem');
  });
});
