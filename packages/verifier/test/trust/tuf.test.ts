// `remote` and `repository` TrustRoots through @sigstore/tuf, against a real signed TUF
// repository: served on loopback for `remote`, packed into `mirrorFS` for `repository`.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TrustRootError } from '../../src/trust/errors.js';
import { loadRemoteTrustRoot, loadRepositoryTrustRoot, type TufClient } from '../../src/trust/tuf.js';
import { type Infra, makeInfra } from '../support/fixtures.js';
import { makeTufRepo, serveRepo, tarGz } from '../support/tuf.js';

let infra: Infra;
let trustedRoot: Buffer;
beforeAll(async () => {
  infra = await makeInfra();
  trustedRoot = Buffer.from(JSON.stringify(infra.trustedRootJSON));
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function mirror(files: ReadonlyMap<string, Buffer>) {
  const server = await serveRepo(files);
  closers.push(server.close);
  return server;
}

const b64 = (data: Buffer) => data.toString('base64');
const clock = () => new Date('2030-01-02T03:04:05Z');

async function failure(promise: Promise<unknown>): Promise<TrustRootError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TrustRootError) return error;
    throw error;
  }
  throw new Error('expected a TrustRootError');
}

describe('remote TrustRoots', () => {
  it('fetch and verify trusted_root.json from the mirror with @sigstore/tuf', async () => {
    const repo = makeTufRepo({ 'trusted_root.json': trustedRoot });
    const server = await mirror(repo.files);
    const root = await loadRemoteTrustRoot(
      'private',
      { root: b64(repo.root), mirror: `${server.url}/` },
      { clock, privateHosts: [new URL(server.url).host] },
    );
    expect(root).toMatchObject({ name: 'private', origin: 'remote', loadedAt: clock() });
    expect(root.material.tlogs[0]?.logID).toEqual(infra.trustRoot.material.tlogs[0]?.logID);
    expect(server.requests).toEqual(
      expect.arrayContaining([
        '2.root.json',
        'timestamp.json',
        'snapshot.json',
        'targets.json',
        'targets/trusted_root.json',
      ]),
    );
  });

  it('follow root rotation and read a custom target name', async () => {
    const repo = makeTufRepo({ 'custom.json': trustedRoot }, { rotateRoot: true, consistentSnapshot: true });
    const server = await mirror(repo.files);
    const root = await loadRemoteTrustRoot(
      'rotated',
      { root: b64(repo.root), mirror: server.url, trustedRootTarget: 'custom.json', targets: 'targets' },
      { privateHosts: [new URL(server.url).host] },
    );
    expect(root.trustedRoot.tlogs).toHaveLength(1);
  });

  it('refuse metadata signed by keys the root does not trust', async () => {
    const repo = makeTufRepo({ 'trusted_root.json': trustedRoot }, { untrusted: true });
    const server = await mirror(repo.files);
    const error = await failure(
      loadRemoteTrustRoot(
        'evil',
        { root: b64(repo.root), mirror: server.url },
        { privateHosts: [new URL(server.url).host] },
      ),
    );
    expect(error).toMatchObject({ code: 'TRUST_ROOT_UNAVAILABLE', trustRoot: 'evil' });
    expect(error.message).toBe(
      `TrustRoot "evil": cannot load trusted_root.json from ${server.url}: its metadata does not verify`,
    );
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('fail clearly when the mirror is unreachable', async () => {
    const repo = makeTufRepo({ 'trusted_root.json': trustedRoot });
    const server = await mirror(new Map());
    await server.close();
    closers.pop();
    const error = await failure(
      loadRemoteTrustRoot(
        'down',
        { root: b64(repo.root), mirror: server.url },
        { timeoutMs: 2000, privateHosts: [new URL(server.url).host] },
      ),
    );
    expect(error.code).toBe('TRUST_ROOT_UNAVAILABLE');
    expect(error.message).toBe(
      `TrustRoot "down": cannot load trusted_root.json from ${server.url}: could not reach ${new URL(server.url).host}: the connection failed`,
    );
  });

  it('give up at the deadline and use the injected client', async () => {
    const requests: unknown[] = [];
    const hanging: TufClient = (request) => {
      requests.push(request);
      return new Promise(() => {});
    };
    const repo = makeTufRepo({});
    const error = await failure(
      loadRemoteTrustRoot(
        'slow',
        { root: b64(repo.root), mirror: 'https://tuf.example' },
        { tufClient: hanging, timeoutMs: 20 },
      ),
    );
    expect(error.cause).toMatchObject({ message: 'no answer within 20 ms' });
    expect(requests).toEqual([
      expect.objectContaining({
        mirror: 'https://tuf.example',
        root: repo.root,
        target: 'trusted_root.json',
        timeoutMs: 20,
        signal: expect.objectContaining({ aborted: true }),
      }),
    ]);
    const answering: TufClient = async () => ({
      content: JSON.stringify(infra.trustedRootJSON),
      expires: new Date('2099-01-01'),
      verified: new Map(),
    });
    const root = await loadRemoteTrustRoot(
      'fast',
      { root: b64(repo.root), mirror: 'https://tuf.example' },
      { tufClient: answering },
    );
    expect(root.origin).toBe('remote');
  });

  it('refuse an invalid root and an unsupported targets path', async () => {
    expect((await failure(loadRemoteTrustRoot('x', { root: 'not base64!', mirror: 'https://m' }))).code).toBe(
      'TRUST_ROOT_INVALID',
    );
    expect(
      (
        await failure(
          loadRemoteTrustRoot('x', {
            root: b64(Buffer.from('{"signed":{"_type":"root"}}')),
            mirror: 'https://m',
          }),
        )
      ).message,
    ).toBe('TrustRoot "x": root must be base64 of a TUF root.json');
    const repo = makeTufRepo({});
    const error = await failure(
      loadRemoteTrustRoot('x', { root: b64(repo.root), mirror: 'https://m', targets: 'other/targets' }),
    );
    expect(error.code).toBe('TRUST_ROOT_UNSUPPORTED');
  });
});

describe('repository TrustRoots (mirrorFS)', () => {
  const prefixed = (files: ReadonlyMap<string, Buffer>) =>
    new Map([...files].map(([path, data]) => [`repository/${path}`, data]));

  it('verify the packed repository offline', async () => {
    const repo = makeTufRepo({ 'trusted_root.json': trustedRoot });
    const mirrorFS = b64(
      tarGz(prefixed(repo.files), { directories: ['repository/', 'repository/targets/'] }),
    );
    const root = await loadRepositoryTrustRoot('airgap', { root: b64(repo.root), mirrorFS }, { clock });
    expect(root).toMatchObject({ name: 'airgap', origin: 'repository', loadedAt: clock() });
    expect(root.material.certificateAuthorities).toHaveLength(1);
  });

  it('read consistent-snapshot repositories without the repository/ prefix, picking the right files', async () => {
    const repo = makeTufRepo(
      { 'trusted_root.json': trustedRoot, 'other.json': Buffer.from('{}') },
      { consistentSnapshot: true },
    );
    const files = new Map([
      [`targets/${'0'.repeat(64)}.trusted_root.json`, Buffer.from('stale')],
      ...repo.files,
      ['0.snapshot.json', Buffer.from('old')],
    ]);
    const root = await loadRepositoryTrustRoot('airgap', {
      root: b64(repo.root),
      mirrorFS: b64(tarGz(files)),
    });
    expect(root.trustedRoot.ctlogs).toHaveLength(1);
  });

  it('follow a root rotation inside mirrorFS', async () => {
    const repo = makeTufRepo({ 'trusted_root.json': trustedRoot }, { rotateRoot: true });
    const root = await loadRepositoryTrustRoot('rotated', {
      root: b64(repo.root),
      mirrorFS: b64(tarGz(repo.files)),
    });
    expect(root.trustedRoot.ctlogs).toHaveLength(1);
  });

  it('refuse tampered, expired or incomplete repositories without reaching the network', async () => {
    const repo = makeTufRepo({ 'trusted_root.json': trustedRoot });
    const tampered = new Map(repo.files).set('targets/trusted_root.json', Buffer.from('{"tlogs":[]}'));
    expect(
      (await failure(loadRepositoryTrustRoot('t', { root: b64(repo.root), mirrorFS: b64(tarGz(tampered)) })))
        .code,
    ).toBe('TRUST_ROOT_UNAVAILABLE');
    const expired = makeTufRepo({ 'trusted_root.json': trustedRoot }, { expires: '2001-01-01T00:00:00Z' });
    const error = await failure(
      loadRepositoryTrustRoot('e', { root: b64(expired.root), mirrorFS: b64(tarGz(expired.files)) }),
    );
    expect(error.message).toBe(
      'TrustRoot "e": cannot load trusted_root.json from mirrorFS: its metadata has expired (is the mirror still updated?)',
    );
    const untrusted = makeTufRepo({ 'trusted_root.json': trustedRoot }, { untrusted: true });
    expect(
      (
        await failure(
          loadRepositoryTrustRoot('u', { root: b64(untrusted.root), mirrorFS: b64(tarGz(untrusted.files)) }),
        )
      ).code,
    ).toBe('TRUST_ROOT_UNAVAILABLE');
    const noTarget = makeTufRepo({});
    expect(
      (
        await failure(
          loadRepositoryTrustRoot('n', { root: b64(noTarget.root), mirrorFS: b64(tarGz(noTarget.files)) }),
        )
      ).code,
    ).toBe('TRUST_ROOT_UNAVAILABLE');
  });

  it('refuse a mirrorFS that is not a gzipped tar', async () => {
    const repo = makeTufRepo({});
    const error = await failure(
      loadRepositoryTrustRoot('g', { root: b64(repo.root), mirrorFS: b64(Buffer.from('plain')) }),
    );
    expect(error).toMatchObject({
      code: 'TRUST_ROOT_INVALID',
      message: 'TrustRoot "g": mirrorFS must be base64 of a gzipped tar',
    });
  });
});
