import { describe, expect, it } from 'vitest';
import { InvalidPolicyError } from '../src/errors.js';
import { compileException, DEFAULT_MAX_EXCEPTION_LIFETIME_MS, exceptionState } from '../src/exceptions.js';
import { compilePolicy } from '../src/match.js';
import { parseReference } from '../src/reference.js';
import { DAY, DIGEST, exception, imagePolicy, NOW } from './support/tenancy.js';

describe('compileException', () => {
  const compiled = compileException(
    exception('team-a', 'hotfix', {
      images: [{ glob: 'registry.example/team-a/*' }, { digest: DIGEST }],
      policies: [
        { kind: 'ClusterImagePolicy', name: 'release' },
        { kind: 'ImagePolicy', name: 'ci' },
      ],
      created: NOW,
      expires: NOW + DAY,
    }),
  );

  it("names the policies as verdicts do: an ImagePolicy by namespace/name, of the exception's namespace", () => {
    expect(compiled).toMatchObject({
      name: 'team-a/hotfix',
      namespace: 'team-a',
      reason: 'reason of hotfix',
      expiresAt: NOW + DAY,
      createdAt: NOW,
    });
    expect([...compiled.policies]).toEqual(['release', 'team-a/ci']);
  });

  it('covers images by glob (as a policy glob sees them) or by digest', () => {
    const covers = (image: string) => compiled.covers(parseReference(image));
    expect(covers('registry.example/team-a/app:v1')).toBe(true);
    expect(covers(`registry.example/team-a/app:v1@${DIGEST}`)).toBe(true);
    expect(covers(`docker.io/elsewhere/other@${DIGEST}`)).toBe(true);
    expect(covers('registry.example/team-a/deeper/app:v1')).toBe(false);
    expect(covers(`registry.example/team-b/app@sha256:${'e'.repeat(64)}`)).toBe(false);
  });

  it('refuses an invalid glob, naming the exception and the field', () => {
    const bad = exception('team-a', 'bad', {
      images: [{ digest: DIGEST }, { glob: 'registry.example/(team)' }],
      policies: [{ kind: 'ClusterImagePolicy', name: 'release' }],
      expires: NOW + DAY,
    });
    expect(() => compileException(bad)).toThrow(InvalidPolicyError);
    expect(() => compileException(bad)).toThrow(
      /^ImagePolicyException "team-a\/bad" spec\.images\[1\]\.glob: invalid glob/,
    );
  });

  it('an invalid ImagePolicy glob names the ImagePolicy', () => {
    expect(() => compilePolicy(imagePolicy('team-a', 'p', ['bad glob']))).toThrow(
      /^ImagePolicy "team-a\/p" spec\.images\[0\]\.glob: invalid glob/,
    );
  });
});

describe('exceptionState', () => {
  const MAX = DEFAULT_MAX_EXCEPTION_LIFETIME_MS;

  it('is active until the expiry, then expired at once', () => {
    const e = { createdAt: NOW - DAY, expiresAt: NOW + 1 };
    expect(exceptionState(e, NOW, MAX)).toBe('active');
    expect(exceptionState(e, NOW + 1, MAX)).toBe('expired');
  });

  it('is too-long when created to live longer than the maximum, measured from its creation', () => {
    expect(exceptionState({ createdAt: NOW - DAY, expiresAt: NOW - DAY + MAX }, NOW, MAX)).toBe('active');
    expect(exceptionState({ createdAt: NOW - DAY, expiresAt: NOW - DAY + MAX + 1 }, NOW, MAX)).toBe(
      'too-long',
    );
    // Without a creation time (a file's object), from now.
    expect(exceptionState({ createdAt: undefined, expiresAt: NOW + MAX }, NOW, MAX)).toBe('active');
    expect(exceptionState({ createdAt: undefined, expiresAt: NOW + MAX + 1 }, NOW, MAX)).toBe('too-long');
  });

  it('an unreadable time never makes an exception active', () => {
    expect(exceptionState({ createdAt: undefined, expiresAt: Number.NaN }, NOW, MAX)).toBe('expired');
    expect(exceptionState({ createdAt: Number.NaN, expiresAt: NOW + DAY }, NOW, MAX)).toBe('too-long');
  });
});
