import { describe, expect, it } from 'vitest';
import { InputError, UsageError, userMessage } from '../src/errors.js';

describe('userMessage', () => {
  it('gives one line for input errors and the system errors users cause', () => {
    expect(userMessage(new UsageError('bad flag'))).toBe('bad flag');
    expect(userMessage(new InputError('bad file'))).toBe('bad file');
    expect(userMessage(Object.assign(new Error('x'), { code: 'ENOENT', path: '/p' }))).toBe(
      '/p: no such file or directory',
    );
    expect(
      userMessage(Object.assign(new Error('x'), { code: 'EADDRINUSE', address: '::', port: 8443 })),
    ).toBe(':::8443: address already in use');
    expect(userMessage(Object.assign(new Error('x'), { code: 'EACCES' }))).toBe('permission denied');
  });

  it('leaves bugs alone, so they keep their stack', () => {
    expect(userMessage(new TypeError('x is undefined'))).toBeUndefined();
    expect(userMessage(Object.assign(new Error('x'), { code: 'ERR_SOMETHING' }))).toBeUndefined();
  });
});
