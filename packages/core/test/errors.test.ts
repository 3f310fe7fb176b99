import { describe, expect, it } from 'vitest';
import { CoreError, InvalidPolicyError, InvalidReferenceError, quote } from '../src/errors.js';

describe('errors carry a code, keep their cause, and read well', () => {
  it('InvalidReferenceError', () => {
    const cause = new Error('inner');
    const error = new InvalidReferenceError('Bad', 'repository name must be lowercase', { cause });
    expect(error).toBeInstanceOf(CoreError);
    expect(error).toMatchObject({
      name: 'InvalidReferenceError',
      code: 'INVALID_REFERENCE',
      reference: 'Bad',
      cause,
    });
    expect(error.message).toBe('invalid image reference "Bad": repository name must be lowercase');
  });

  it('InvalidPolicyError with and without a policy name and path', () => {
    expect(new InvalidPolicyError('INVALID_GLOB', 'p', 'spec.images[0].glob', 'bad').message).toBe(
      'ClusterImagePolicy "p" spec.images[0].glob: bad',
    );
    expect(new InvalidPolicyError('INVALID_GLOB', 'p', '', 'bad').message).toBe(
      'ClusterImagePolicy "p": bad',
    );
    expect(new InvalidPolicyError('INVALID_SELECTOR', undefined, 'matchExpressions[0]', 'bad').message).toBe(
      'matchExpressions[0]: bad',
    );
    const bare = new InvalidPolicyError('INVALID_SELECTOR', undefined, '', 'bad');
    expect(bare).toMatchObject({ name: 'InvalidPolicyError', code: 'INVALID_SELECTOR', message: 'bad' });
  });

  it('CoreError', () => {
    expect(new CoreError('INVALID_GLOB', 'm')).toMatchObject({
      name: 'CoreError',
      code: 'INVALID_GLOB',
      message: 'm',
    });
  });

  it('quote escapes and caps', () => {
    expect(quote('a"b\n')).toBe('"a\\"b\\n"');
    expect(quote('x'.repeat(400))).toBe(`"${'x'.repeat(300)}..."`);
  });
});
