// Item: the pending changesets say what is true on release day. They release only packages of the
// fixed group, every type or function they name in code is exported by a public package (so a
// name made internal or moved by a later change fails here, not in the release notes), and none
// counts exports (each library's own test pins its list; a count in a note goes stale).
import { describe, expect, it } from 'vitest';
import { apiNamesIn, pendingChangesets } from '../src/changesets.ts';
import { exportedNames } from '../src/exports.ts';
import { readChangesetsConfig } from '../src/versions.ts';
import { publicPackages, repositoryRoot } from '../src/workspace.ts';

const root = repositoryRoot();
const changesets = await pendingChangesets(root);

describe('the pending changesets', () => {
  it('release only packages of the fixed group', async () => {
    const group = new Set((await readChangesetsConfig(root)).fixed[0] ?? []);
    expect(changesets.length).toBeGreaterThan(0);
    for (const changeset of changesets) {
      expect(Object.keys(changeset.releases).length, changeset.file).toBeGreaterThan(0);
      expect(
        Object.keys(changeset.releases).filter((name) => !group.has(name)),
        changeset.file,
      ).toEqual([]);
    }
  });

  it('name only types and functions that a public package exports', async () => {
    const exported = new Set<string>();
    for (const pkg of await publicPackages(root)) {
      for (const name of await exportedNames(pkg.dir)) exported.add(name);
    }
    // Sanity: the reader sees values, types and re-exports (`export *` in k8s-types).
    expect(
      [...['createPolicyEngines', 'PolicyEngineHost', 'AdmissionAnswer']].filter((n) => !exported.has(n)),
    ).toEqual([]);
    const unknown = changesets.flatMap((changeset) =>
      apiNamesIn(changeset.text)
        .filter((name) => !exported.has(name))
        .map((name) => `${changeset.file}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it('count no exports', () => {
    const counting = changesets.filter((changeset) =>
      /\b\d+\s+(?:runtime\s+)?exports\b/.test(changeset.text),
    );
    expect(counting.map((changeset) => changeset.file)).toEqual([]);
  });
});

describe('apiNamesIn', () => {
  it('takes types, classes and called functions from code spans, not fields, options or codes', () => {
    const note =
      '`OutboundNetwork`, the guard, also guards `remotePolicyFetcher({ privateHosts,\nnetwork })`; ' +
      '`RemoteTrustRoots.retain` prunes `cacheDir`; `check(uri)`, `UNSUPPORTED_KMS`, `Error.cause`, `data`.';
    expect(apiNamesIn(note).sort()).toEqual(['OutboundNetwork', 'RemoteTrustRoots', 'remotePolicyFetcher']);
  });
});
