import { describe, expect, it } from 'vitest';
import { displayUrl, isInfrastructureFailure, RegistryError } from '../src/errors.js';

describe('RegistryError', () => {
  it('names registry and repository, keeps the cause and the status', () => {
    const cause = new Error('socket hang up');
    const error = new RegistryError(
      'UNREACHABLE',
      { registry: 'r.example', repository: 'team/app', status: 502 },
      'boom',
      {
        cause,
      },
    );
    expect(error.message).toBe('registry r.example repository team/app: boom');
    expect(error).toMatchObject({
      name: 'RegistryError',
      code: 'UNREACHABLE',
      registry: 'r.example',
      repository: 'team/app',
    });
    expect(error.status).toBe(502);
    expect(error.problem).toBe('boom');
    expect(error.cause).toBe(cause);
    expect(new RegistryError('TIMEOUT', { registry: 'r.example' }, 'late').message).toBe(
      'registry r.example: late',
    );
  });

  it('classifies infrastructure failures', () => {
    expect(isInfrastructureFailure(new RegistryError('TIMEOUT', { registry: 'r' }, 'x'))).toBe(true);
    expect(isInfrastructureFailure(new RegistryError('DIGEST_MISMATCH', { registry: 'r' }, 'x'))).toBe(true);
    expect(isInfrastructureFailure(new RegistryError('INVALID_REQUEST', { registry: 'r' }, 'x'))).toBe(false);
    expect(isInfrastructureFailure(new Error('x'))).toBe(false);
    expect(isInfrastructureFailure(undefined)).toBe(false);
  });

  it('prints URLs without credentials or query', () => {
    expect(displayUrl(new URL('https://user:pw@r.example:8443/v2/x?token=secret#f'))).toBe(
      'https://r.example:8443/v2/x',
    );
  });
});
