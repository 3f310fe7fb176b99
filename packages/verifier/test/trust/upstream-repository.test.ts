// policy-controller's serialized-repository TrustRoot (`test/testdata/trustroot/e2e/with-repository.yaml`
// of its v0.15.1 module, the same template as its docs' example), filled as its e2e script fills it
// (`sed s@ROOT_JSON@...@; s@REPOSITORY@...@`) with a real TUF repository made by python-tuf and
// packed by tar. Upstream requires `mirrorFS` to be a *gzipped* tar: its validation builds a TUF
// client with `tuf.ClientFromSerializedMirror`, which opens the archive with `gzip.NewReader`, so a
// plain tar is refused at apply time ("failed to uncompress: gzip: invalid header", checked against
// upstream's own function). Signet gives the same outcome: the gzipped tar loads, the plain one is
// refused with the reason.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseTrustRoot } from '@signet/k8s-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { compileTrustRoot } from '../../src/trust/compile.js';
import { type Infra, makeInfra } from '../support/fixtures.js';
import { loadTestbed } from '../support/registry-helpers.js';

const TEMPLATE = 'test/testdata/trustroot/e2e/with-repository.yaml';

describe("policy-controller's serialized-repository TrustRoot (mirrorFS)", () => {
  let upstream = '';
  let dir = '';
  let infra: Infra;
  let root = '';

  beforeAll(async () => {
    const testbed = await loadTestbed();
    upstream = await testbed.policyControllerModule();
    infra = await makeInfra();
    dir = await mkdtemp(join(tmpdir(), 'signet-upstream-repository-'));
    // Laid out as sigstore's scaffolding serves it and upstream's archives hold it: `repository/...`.
    const repository = await testbed.TufRepository.create(join(dir, 'repository'), {
      'trusted_root.json': Buffer.from(JSON.stringify(infra.trustedRootJSON)),
    });
    root = (await repository.initialRoot()).toString('base64');
    const tar = promisify(execFile);
    await tar('tar', ['-C', dir, '-czf', join(dir, 'repository.tgz'), 'repository'], { timeout: 30_000 });
    await tar('tar', ['-C', dir, '-cf', join(dir, 'repository.tar'), 'repository'], { timeout: 30_000 });
  });

  afterAll(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  /** The upstream template with its placeholders replaced, as its e2e script does, then parsed. */
  async function filled(archive: string) {
    const template = await readFile(join(upstream, TEMPLATE), 'utf8');
    expect(template).toContain('ROOT_JSON');
    expect(template).toContain('REPOSITORY');
    const mirrorFS = (await readFile(join(dir, archive))).toString('base64');
    const text = template.replaceAll('ROOT_JSON', root).replaceAll('REPOSITORY', mirrorFS);
    const [document] = parseAllDocuments(text);
    return parseTrustRoot(document?.toJS());
  }

  it('upstream documents mirrorFS as a gzipped tar', async () => {
    const apiTypes = await readFile(join(upstream, 'docs/api-types/index-v1alpha1.md'), 'utf8');
    expect(apiTypes).toMatch(/\| mirrorFS \| MirrorFS is the base64 tarred, gzipped, and base64 encoded/);
  });

  it('loads the template filled with a gzipped tar of the repository', async () => {
    const trustRoot = await filled('repository.tgz');
    expect(trustRoot.metadata.name).toBe('my-repository-serialized');
    const compiled = await compileTrustRoot(trustRoot);
    expect(compiled).toMatchObject({ name: 'my-repository-serialized', origin: 'repository' });
    expect(compiled.material.certificateAuthorities).toHaveLength(1);
  });

  it('refuses it filled with a plain tar, as upstream does (gzip: invalid header)', async () => {
    const trustRoot = await filled('repository.tar');
    await expect(compileTrustRoot(trustRoot)).rejects.toMatchObject({
      code: 'TRUST_ROOT_INVALID',
      message: 'TrustRoot "my-repository-serialized": mirrorFS must be base64 of a gzipped tar',
    });
  });
});
