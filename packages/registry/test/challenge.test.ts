import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { parseChallenges, pickChallenge } from '../src/challenge.js';

describe('parseChallenges', () => {
  it.each([
    [
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/alpine:pull"',
      [
        {
          scheme: 'bearer',
          params: {
            realm: 'https://auth.docker.io/token',
            service: 'registry.docker.io',
            scope: 'repository:library/alpine:pull',
          },
        },
      ],
    ],
    ['Basic realm="Registry Realm"', [{ scheme: 'basic', params: { realm: 'Registry Realm' } }]],
    [
      'Basic realm="a, b", BEARER Realm = https://t.example/token , Service=x',
      [
        { scheme: 'basic', params: { realm: 'a, b' } },
        { scheme: 'bearer', params: { realm: 'https://t.example/token', service: 'x' } },
      ],
    ],
    [
      'Bearer realm="with \\"quotes\\" and \\\\"',
      [{ scheme: 'bearer', params: { realm: 'with "quotes" and \\' } }],
    ],
    ['Bearer realm="unterminated', [{ scheme: 'bearer', params: { realm: 'unterminated' } }]],
    // Malformed headers give something harmless, never an exception.
    [
      'Bearer "stray" realm=x',
      [
        { scheme: 'bearer', params: {} },
        { scheme: 'stray', params: { realm: 'x' } },
      ],
    ],
    ['=orphan, Bearer =value, Negotiate', [{ scheme: 'negotiate', params: {} }]],
    ['Basic realm=a, =x', [{ scheme: 'basic', params: { realm: 'a' } }]],
    ['', []],
  ])('parses %j', (header, expected) => {
    expect(parseChallenges(header)).toEqual(expected);
  });

  test.prop([fc.string()])('never throws and always terminates', (header) => {
    expect(Array.isArray(parseChallenges(header))).toBe(true);
  });
});

describe('pickChallenge', () => {
  it('prefers Bearer with a realm, then Basic', () => {
    expect(pickChallenge('Basic realm="r", Bearer realm="https://t/token",service="s"')).toEqual({
      scheme: 'bearer',
      realm: 'https://t/token',
      service: 's',
      scope: undefined,
      error: undefined,
    });
    expect(pickChallenge('Bearer service="no realm", Basic realm="r"')).toEqual({ scheme: 'basic' });
    expect(pickChallenge('Negotiate')).toBeUndefined();
    expect(pickChallenge(null)).toBeUndefined();
  });
});
