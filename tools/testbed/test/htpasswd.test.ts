import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeHtpasswd } from '../src/htpasswd.ts';
import { createRunDir, ProcessGroup } from '../src/process.ts';
import { type Registry, startRegistry } from '../src/registry.ts';

// The htpasswd file against the program that reads it: CNCF distribution with `auth: htpasswd`.

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('writeHtpasswd', () => {
  let group: ProcessGroup;
  let registry: Registry;
  let file = '';

  beforeAll(async () => {
    group = new ProcessGroup({ runDir: await createRunDir('signet-htpasswd-test-') });
    file = join(group.runDir, 'htpasswd');
    await writeHtpasswd(file, { robot: 'correct horse', AWS: 'a:password with a colon' });
    registry = await startRegistry({ referrers: false, group, htpasswdFile: file });
  });

  afterAll(() => group?.stopAll());

  const status = async (authorization?: string) =>
    (
      await fetch(`${registry.url}/v2/`, {
        ...(authorization ? { headers: { authorization } } : {}),
        signal: AbortSignal.timeout(10_000),
      })
    ).status;

  it('writes one bcrypt line per user, as htpasswd -nbB does', async () => {
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^robot:\$2[aby]\$05\$[./A-Za-z0-9]{53}$/);
    expect(lines[1]).toMatch(/^AWS:\$2[aby]\$05\$/);
  });

  it('lets the registry accept the right passwords', async () => {
    expect(await status(basic('robot', 'correct horse'))).toBe(200);
    expect(await status(basic('AWS', 'a:password with a colon'))).toBe(200);
  });

  it('lets the registry refuse a wrong password, an unknown user and no credentials', async () => {
    expect(await status(basic('robot', 'correct horse!'))).toBe(401);
    expect(await status(basic('nobody', 'correct horse'))).toBe(401);
    expect(await status()).toBe(401);
  });

  it('refuses a user name the file format cannot hold', async () => {
    await expect(writeHtpasswd(join(group.runDir, 'bad'), { 'a:b': 'x' })).rejects.toThrow(/cannot be empty/);
  });
});
