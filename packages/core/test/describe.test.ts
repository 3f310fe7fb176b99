import { describe, expect, it } from 'vitest';
import { describeCause, oneLine } from '../src/describe.js';

describe('describeCause', () => {
  it('walks an Error cause chain', () => {
    const root = new Error('connect ECONNREFUSED 10.0.0.1:443');
    const mid = new Error('fetching manifest', { cause: root });
    expect(describeCause(new Error('registry unreachable', { cause: mid }))).toBe(
      'registry unreachable: fetching manifest: connect ECONNREFUSED 10.0.0.1:443',
    );
  });

  it('stops at an error whose message already says its cause in words', () => {
    const openssl = new Error(
      '40C3682D927F0000:error:0A00010B:SSL routines:tls_validate_record_header:wrong version number',
    );
    const worded = Object.assign(new Error('the registry answered plain HTTP', { cause: openssl }), {
      causeInMessage: true,
    });
    expect(describeCause(new Error('cannot read signatures', { cause: worded }))).toBe(
      'cannot read signatures: the registry answered plain HTTP',
    );
    expect(worded.cause).toBe(openssl);
    const unworded = Object.assign(new Error('TLS failed', { cause: openssl }), { causeInMessage: false });
    expect(describeCause(unworded)).toContain('SSL routines');
  });

  it('names an Error without a message by its name', () => {
    expect(describeCause(new TypeError(''))).toBe('TypeError');
  });

  it('prints an AggregateError with and without its own message, and its cause', () => {
    expect(describeCause(new AggregateError([new Error('a'), 'b'], 'both failed'))).toBe('both failed: a; b');
    expect(describeCause(new AggregateError([new Error('a')], '', { cause: 'root' }))).toBe('a: root');
  });

  it('never prints [object Object]', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const bare = Object.create(null) as Record<string, unknown>;
    bare.self = bare;
    const values: [unknown, string][] = [
      ['plain text', 'plain text'],
      [{ status: 503, body: { message: 'busy' } }, '{"status":503,"body":{"message":"busy"}}'],
      [cyclic, 'Object (not serializable)'],
      [bare, 'Object (not serializable)'],
      [{ n: 1n }, 'Object (not serializable)'],
      [{ toJSON: () => undefined }, 'Object (not serializable)'],
      [null, 'null'],
      [undefined, 'undefined'],
      [42, '42'],
      [Symbol('s'), 'Symbol(s)'],
      [function fetchIt() {}, 'function fetchIt'],
      [() => {}, 'function (anonymous)'],
      [{ long: 'x'.repeat(400) }, `{"long":"${'x'.repeat(291)}...`],
    ];
    for (const [value, text] of values) {
      expect(describeCause(value)).toBe(text);
      expect(describeCause(value)).not.toContain('[object Object]');
    }
  });

  it('stops on a cause cycle', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(describeCause(a)).toBe('a: b: a: b: a: b: a: b: a: ...');
  });

  it('keeps a message on one line', () => {
    expect(describeCause(new Error('line 1\nline 2\r\n\tline 3'))).toBe('line 1 line 2 line 3');
    expect(oneLine('a\u0000b\u007fc')).toBe('a b c');
  });
});
