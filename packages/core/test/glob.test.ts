import { describe, expect, it } from 'vitest';
import { InvalidPolicyError } from '../src/errors.js';
import { compileGlob, globMatches } from '../src/glob.js';
import { parseReference } from '../src/reference.js';

const D = `sha256:${'5'.repeat(64)}`;

/** [image as written, glob, matches]. Images are normalized first, as policy-controller does. */
const table: [string, string, boolean][] = [
  // Docker Hub official images live under index.docker.io/library.
  ['foo', 'index.docker.io/library/foo:latest', true],
  ['foo', 'index.docker.io/library/foo:*', true],
  ['foo', 'index.docker.io/library/*', true],
  ['foo', 'index.docker.io/library/*:latest', true],
  ['foo', 'index.docker.io/*/*', true],
  ['foo', 'index.docker.io/**', true],
  ['foo', 'index.docker.**', true],
  ['foo', 'inde**', true],
  ['foo', '**', true],
  ['foo', '*', true], // bare `*` means index.docker.io/library/*
  ['docker.io/library/foo', '*', true],
  ['foo', 'index.docker.io/library/bar', false],
  ['foo', 'docker.io/library/foo', false], // globs must name index.docker.io
  // A written `foo` only matches through the normalized name; policy-controller's webhook does the same.
  ['foo', 'foo', false],
  ['foo', 'foo*', false],
  ['myuser/myapp', 'index.docker.io/myuser/myapp:latest', true],
  ['myuser/myapp', 'index.docker.io/myuser/*', true],
  ['myuser/myapp', 'index.docker.io/*/*', true],
  ['myuser/myapp', '*/*', true], // bare `*/*` means index.docker.io/*/*
  ['myuser/myapp', '*', false], // not an official image
  ['myuser/myapp', 'index.docker.io/library/*', false],
  // `*` stays within one path segment; `**` crosses segments.
  ['ghcr.io/foo/bar', 'ghcr.io/*/*', true],
  ['ghcr.io/foo/bar', 'ghcr.io/**', true],
  ['ghcr.io/foo/bar', 'ghcr.io/*', false],
  ['ghcr.io/foo', 'ghcr.io/*/*', false],
  ['ghcr.io/foo', 'ghcr.io/**', true],
  ['ghcr.io/foo', 'ghc**', true],
  ['ghcr.io/foo', '*/**', true],
  ['ghcr.io/foo', 'ghcr.io/foo*', true], // `*` also matches `:latest`
  ['ghcr.io/foo', 'ghcr.io/foo**', true],
  ['ghcr.io/a/b/c:1', 'ghcr.io/**/c:*', true],
  ['ghcr.io/a/b/c:1', 'ghcr.io/*/c:*', false],
  ['ghcr.io/a/b/c:1', 'ghcr.io/a/***', true], // a longer run of stars is `**`
  ['ghcr.io/foo:v1.2', 'ghcr.io/foo:v1.*', true],
  ['ghcr.io/foo:v2.0', 'ghcr.io/foo:v1.*', false],
  ['ghcr.io/foo:v1x2', 'ghcr.io/foo:v1.*', false], // `.` is literal
  ['ghcrxio/foo', 'ghcr.io/**', false],
  ['prefix-ghcr.io/foo', 'ghcr.io/**', false], // anchored at the start
  ['ghcr.io/foo-suffix', 'ghcr.io/foo', false], // and at the end
  // Ports, digests, tags next to digests.
  ['registry.example:5000/team/app:v1', 'registry.example:5000/**', true],
  ['registry.example:5000/team/app:v1', 'registry.example:*/team/*', true],
  ['registry.example:5000/team/app:v1', 'registry.example/**', false],
  [`ghcr.io/foo@${D}`, `ghcr.io/foo@${D}`, true],
  [`ghcr.io/foo@${D}`, 'ghcr.io/foo@sha256:*', true],
  [`ghcr.io/foo@${D}`, 'ghcr.io/*', true], // `*` crosses `@`
  [`ghcr.io/foo:v1@${D}`, 'ghcr.io/foo:v1*', false], // with a digest the tag is not part of the name
  [`ghcr.io/foo:v1@${D}`, 'ghcr.io/foo@**', true],
  // Host names are case-insensitive on both sides; repositories are lowercase by grammar.
  ['REGISTRY.example.com/app', 'registry.example.com/**', true],
  ['registry.example.com/app', 'Registry.Example.COM/**', true],
  ['registry.example.com/app:V1', 'registry.example.com/app:v1', false], // tags are case-sensitive
  ['localhost:5000/app', 'localhost:5000/*', true],
  ['localhost/app', 'index.docker.io/**', false], // localhost is a registry, as for the runtimes
];

describe('glob matching, compatible with sigstore policy-controller', () => {
  for (const [image, glob, matches] of table) {
    it(`${glob} ${matches ? 'matches' : 'does not match'} ${image}`, () => {
      expect(globMatches(compileGlob(glob), parseReference(image))).toBe(matches);
    });
  }

  it('keeps the source and the rewritten pattern', () => {
    expect(compileGlob('*')).toMatchObject({ source: '*', pattern: 'index.docker.io/library/*' });
    expect(compileGlob('*/*')).toMatchObject({ source: '*/*', pattern: 'index.docker.io/*/*' });
    expect(compileGlob('GHCR.io/Org/**').pattern).toBe('ghcr.io/Org/**');
    expect(compileGlob('Foo*').pattern).toBe('Foo*');
  });

  it.each(['.+', '[a-z]*', 'ghcr.io/foo bar', 'ghcr.io/$', '', 'a?b'])(
    'rejects the invalid glob %j',
    (glob) => {
      let error: unknown;
      try {
        compileGlob(glob);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(InvalidPolicyError);
      expect(error).toMatchObject({ code: 'INVALID_GLOB', policy: undefined, path: '' });
      expect((error as Error).message).toContain('invalid glob');
    },
  );

  it('runs in linear time on a glob that makes a backtracking RegExp explode', () => {
    const glob = compileGlob(`${'*a'.repeat(30)}*b`);
    const name = `${'a'.repeat(200)}c`;
    const started = performance.now();
    expect(glob.matches(name)).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('matches the empty name only with globs that can be empty', () => {
    expect(compileGlob('**').matches('')).toBe(true);
    expect(compileGlob('a*').matches('')).toBe(false);
  });
});

describe('remembered answers', () => {
  it('give the same answer as a fresh glob, past the memo bound and for very long names', () => {
    const glob = compileGlob('registry.example/team/*/app-**');
    // 1,800 distinct names: 1,200 short ones, past the 1,024 remembered (the memo starts over),
    // and 600 too long to be remembered.
    const names = Array.from({ length: 1800 }, (_, i) =>
      i % 3 === 0
        ? `registry.example/team/t${i}/app-${i}`
        : i % 3 === 1
          ? `registry.example/team/t${i}/x/app-${i}`
          : `registry.example/team/${'a'.repeat(600 + (i % 7))}${i}/app-1`,
    );
    // The names are distinct, so a second glob computes each answer the first time it sees it.
    const other = compileGlob(glob.source);
    const fresh = names.map((name) => other.matches(name));
    expect(fresh.filter(Boolean).length).toBe(1200);
    for (let round = 0; round < 2; round++) expect(names.map((name) => glob.matches(name))).toEqual(fresh);
  });
});
