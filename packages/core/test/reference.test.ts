import { describe, expect, it } from 'vitest';
import { CoreError, InvalidReferenceError } from '../src/errors.js';
import { parseReference, withDigest } from '../src/reference.js';

const D = `sha256:${'a'.repeat(64)}`;

describe('parseReference: normalization like the container runtimes', () => {
  const cases: [string, string, string][] = [
    // input, normalized, matchName
    ['alpine', 'index.docker.io/library/alpine:latest', 'index.docker.io/library/alpine:latest'],
    ['alpine:3.20', 'index.docker.io/library/alpine:3.20', 'index.docker.io/library/alpine:3.20'],
    ['library/alpine', 'index.docker.io/library/alpine:latest', 'index.docker.io/library/alpine:latest'],
    ['docker.io/alpine', 'index.docker.io/library/alpine:latest', 'index.docker.io/library/alpine:latest'],
    ['docker.io/x/y', 'index.docker.io/x/y:latest', 'index.docker.io/x/y:latest'],
    ['index.docker.io/x/y:1', 'index.docker.io/x/y:1', 'index.docker.io/x/y:1'],
    ['myuser/myapp', 'index.docker.io/myuser/myapp:latest', 'index.docker.io/myuser/myapp:latest'],
    ['ghcr.io/org/app', 'ghcr.io/org/app:latest', 'ghcr.io/org/app:latest'],
    [
      'registry.example:5000/team/app:v1',
      'registry.example:5000/team/app:v1',
      'registry.example:5000/team/app:v1',
    ],
    ['localhost:5000/app', 'localhost:5000/app:latest', 'localhost:5000/app:latest'],
    ['localhost/app', 'localhost/app:latest', 'localhost/app:latest'],
    ['localhost:5000', 'index.docker.io/library/localhost:5000', 'index.docker.io/library/localhost:5000'],
    ['[::1]:5000/app', '[::1]:5000/app:latest', '[::1]:5000/app:latest'],
    ['10.0.0.1:5000/a/b/c', '10.0.0.1:5000/a/b/c:latest', '10.0.0.1:5000/a/b/c:latest'],
    [`alpine@${D}`, `index.docker.io/library/alpine@${D}`, `index.docker.io/library/alpine@${D}`],
    [`alpine:3@${D}`, `index.docker.io/library/alpine:3@${D}`, `index.docker.io/library/alpine@${D}`],
    [
      `ghcr.io/a/b@sha512:${'b'.repeat(128)}`,
      `ghcr.io/a/b@sha512:${'b'.repeat(128)}`,
      `ghcr.io/a/b@sha512:${'b'.repeat(128)}`,
    ],
    ['Registry.Example.COM/app:V1', 'registry.example.com/app:V1', 'registry.example.com/app:V1'],
    // Spellings of one registry that runtimes treat alike must not escape a glob.
    ['registry.example:443/team/app:v1', 'registry.example/team/app:v1', 'registry.example/team/app:v1'],
    ['[::1]:443/app', '[::1]/app:latest', '[::1]/app:latest'],
    [
      'registry-1.docker.io/alpine',
      'index.docker.io/library/alpine:latest',
      'index.docker.io/library/alpine:latest',
    ],
    ['docker.io:443/x/y', 'index.docker.io/x/y:latest', 'index.docker.io/x/y:latest'],
    ['registry.example:4430/app', 'registry.example:4430/app:latest', 'registry.example:4430/app:latest'],
    ['Foo/bar', 'foo/bar:latest', 'foo/bar:latest'],
    [
      'a__b/c--d/e.f_g:t_1.2-3',
      'index.docker.io/a__b/c--d/e.f_g:t_1.2-3',
      'index.docker.io/a__b/c--d/e.f_g:t_1.2-3',
    ],
  ];
  for (const [input, normalized, matchName] of cases) {
    it(input, () => {
      const ref = parseReference(input);
      expect(ref.original).toBe(input);
      expect(ref.normalized).toBe(normalized);
      expect(ref.matchName).toBe(matchName);
    });
  }

  it('keeps the parts', () => {
    expect(parseReference(`registry.example:5000/team/app:v1@${D}`)).toEqual({
      original: `registry.example:5000/team/app:v1@${D}`,
      registry: 'registry.example:5000',
      repository: 'team/app',
      tag: 'v1',
      digest: D,
      normalized: `registry.example:5000/team/app:v1@${D}`,
      matchName: `registry.example:5000/team/app@${D}`,
    });
    expect(parseReference('alpine')).toMatchObject({ tag: undefined, digest: undefined });
  });
});

describe('parseReference: invalid references', () => {
  const cases: [string, string, string][] = [
    ['empty', '', 'must not be empty'],
    ['uppercase repository', 'Alpine', 'repository name "Alpine" must be lowercase'],
    ['uppercase path after a host', 'ghcr.io/Org/app', 'repository name "Org/app" must be lowercase'],
    ['empty tag', 'alpine:', 'invalid tag ""'],
    ['bad tag', 'alpine:-x', 'invalid tag "-x"'],
    ['long tag', `alpine:${'t'.repeat(129)}`, 'invalid tag'],
    ['empty digest', 'alpine@', 'invalid digest ""'],
    ['digest without algorithm', `alpine@${'a'.repeat(64)}`, 'expected algorithm:hex'],
    ['unknown algorithm', 'alpine@md5:abc', 'unsupported digest algorithm "md5"'],
    ['short digest', 'alpine@sha256:abc', 'sha256 digest must be 64 lowercase hexadecimal characters'],
    ['uppercase digest', `alpine@sha256:${'A'.repeat(64)}`, 'sha256 digest must be 64 lowercase'],
    ['two digests', `alpine@${D}@${D}`, 'sha256 digest must be 64'],
    ['image ID', 'f'.repeat(64), 'image ID'],
    ['no repository', ':tag', 'repository name must not be empty'],
    ['trailing slash', 'ghcr.io/', 'invalid repository name ""'],
    ['double slash', 'ghcr.io//app', 'invalid repository name "/app"'],
    ['bad separator', 'a..b', 'invalid repository name "a..b"'],
    ['space', 'alpine 3', 'invalid repository name "alpine 3"'],
    ['newline', 'alpine\n', 'invalid repository name "alpine\\n"'],
    ['bad host', '-bad.example/app', 'invalid registry host "-bad.example"'],
    ['bad port', 'host.example:port/app', 'invalid registry host "host.example:port"'],
    ['too long name', `ghcr.io/${'a'.repeat(250)}`, 'name longer than 255 characters'],
    ['too long reference', 'a'.repeat(5000), 'longer than 4096 characters'],
  ];
  for (const [what, input, problem] of cases) {
    it(what, () => {
      let error: unknown;
      try {
        parseReference(input);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(InvalidReferenceError);
      expect(error).toBeInstanceOf(CoreError);
      const invalid = error as InvalidReferenceError;
      expect(invalid.code).toBe('INVALID_REFERENCE');
      expect(invalid.reference).toBe(input);
      expect(invalid.problem).toContain(problem);
      expect(invalid.message).toMatch(/^invalid image reference "/);
    });
  }
});

describe('withDigest', () => {
  it('appends the digest to the reference as written', () => {
    expect(withDigest('alpine:3.20', D)).toBe(`alpine:3.20@${D}`);
    expect(withDigest('registry.example:5000/app', D)).toBe(`registry.example:5000/app@${D}`);
  });
  it('rejects a malformed digest and a reference that already has one', () => {
    expect(() => withDigest('alpine', 'sha256:xyz')).toThrow(InvalidReferenceError);
    expect(() => withDigest(`alpine@${D}`, D)).toThrow(InvalidReferenceError);
  });
});
