// Failures to reach a host, told in a few classes and never in the transport's words: the
// classes come from the error codes along the cause chain (undici and node nest them).
import { describe, expect, it } from 'vitest';
import { PrivateAddressError } from '../../src/net/lookup.js';
import {
  isTransportFailure,
  UnreachableError,
  unreachable,
  unreachableReason,
} from '../../src/net/unreachable.js';

const coded = (code: string, message = code) => Object.assign(new Error(message), { code });
const wrapped = (cause: unknown) => new TypeError('fetch failed', { cause });

describe('unreachable', () => {
  it.each([
    [new PrivateAddressError('10.0.0.1', '10.0.0.1'), 'private-address'],
    [wrapped(new PrivateAddressError('a.example', '127.0.0.1')), 'private-address'],
    [wrapped(coded('ERR_SSL_WRONG_VERSION_NUMBER', 'SSL routines:wrong version number')), 'tls'],
    [wrapped(coded('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate')), 'tls'],
    [coded('EPROTO'), 'tls'],
    [wrapped(coded('ENOTFOUND')), 'name'],
    [coded('EAI_AGAIN'), 'name'],
    [wrapped(coded('UND_ERR_CONNECT_TIMEOUT')), 'timeout'],
    [Object.assign(new Error('aborted'), { name: 'TimeoutError' }), 'timeout'],
    [new AggregateError([coded('ECONNREFUSED'), coded('ETIMEDOUT')]), 'timeout'],
    [wrapped(coded('ECONNREFUSED', 'connect ECONNREFUSED 10.1.2.3:22')), 'connection'],
    [new Error('something else'), 'connection'],
    ['not an error', 'connection'],
    [{ code: 'ENOTFOUND' }, 'name'],
  ])('%s is %s', (error, reason) => {
    expect(unreachableReason(error)).toBe(reason);
  });

  it('says "could not reach HOST" with the class only, and keeps the error as the cause', () => {
    const cause = wrapped(
      coded('ERR_SSL_WRONG_VERSION_NUMBER', 'SSL routines:ssl3_get_record:wrong version number'),
    );
    const error = unreachable('mirror.example:8443', cause);
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error).toMatchObject({ code: 'SIGNET_UNREACHABLE', host: 'mirror.example:8443', reason: 'tls' });
    expect(error.message).toBe('could not reach mirror.example:8443: the TLS handshake failed');
    expect(error.cause).toBe(cause);
    expect(unreachable('other', error)).toBe(error);
    expect(unreachable('h', coded('ENOTFOUND')).message).toBe('could not reach h: its name does not resolve');
    expect(unreachable('h', new Error('x')).message).toBe('could not reach h: the connection failed');
    expect(unreachable('h', coded('ETIMEDOUT')).message).toBe('could not reach h: no answer in time');
  });

  it('tells transport failures from answers', () => {
    expect(isTransportFailure(wrapped(coded('ECONNRESET')))).toBe(true);
    expect(isTransportFailure(coded('EHOSTUNREACH'))).toBe(true);
    expect(isTransportFailure(coded('UND_ERR_SOCKET'))).toBe(true);
    expect(isTransportFailure(coded('CERT_HAS_EXPIRED'))).toBe(true);
    expect(isTransportFailure(new PrivateAddressError('x', 'x'))).toBe(true);
    expect(isTransportFailure(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }))).toBe(
      false,
    );
    expect(isTransportFailure(new Error('no such key'))).toBe(false);
  });
});
