import { describe, expect, it } from 'vitest';
import { RegistryError } from '../src/errors.js';
import { nextLink } from '../src/link.js';

const base = new URL('https://r.example/v2/app/referrers/sha256:1');
const context = { registry: 'r.example', repository: 'app' };

describe('nextLink', () => {
  it.each([
    [
      '</v2/app/referrers/sha256:1?n=1&last=a>; rel="next"',
      'https://r.example/v2/app/referrers/sha256:1?n=1&last=a',
    ],
    ['<https://r.example/page2>; rel=next', 'https://r.example/page2'],
    ['<?last=b>; type="x"; rel="prev next"', 'https://r.example/v2/app/referrers/sha256:1?last=b'],
    ['<https://docs.example/>; rel="help", </v2/x>; REL="Next"', 'https://r.example/v2/x'],
    ['</a>; rel="prev"', undefined],
    ['</a>', undefined],
    ['garbage', undefined],
  ])('reads %j', (header, expected) => {
    expect(nextLink(header, base, context)?.href).toBe(expected);
  });

  it('has nothing without a header', () => {
    expect(nextLink(null, base, context)).toBeUndefined();
  });

  it('refuses an invalid target', () => {
    expect(() => nextLink('<http://[>; rel="next"', base, context)).toThrow(RegistryError);
  });
});
