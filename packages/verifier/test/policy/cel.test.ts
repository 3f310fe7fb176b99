import { describe, expect, it } from 'vitest';
import { CelProgramCache, celRequestHandler, compileCel } from '../../src/policy/cel.js';
import { DEFAULT_CEL_COST_LIMIT } from '../../src/policy/cel-host.js';
import { PREDICATE_TYPES, predicateTypeURI } from '../../src/policy/predicate-types.js';

describe('CEL policies', () => {
  it('pass only on true', () => {
    const evaluate = (source: string, bindings: Record<string, unknown> = {}) =>
      compileCel(source, { costLimit: DEFAULT_CEL_COST_LIMIT }).evaluate(bindings);
    expect(evaluate('x.startsWith("a") && x.lowerAscii() == "ab"', { x: 'aB' })).toEqual({ passed: true });
    expect(evaluate('false')).toEqual({ passed: false, reason: 'CEL policy returned false' });
    expect(evaluate('1.5')).toMatchObject({ reason: 'CEL policy returned 1.5, not a bool' });
    expect(evaluate('7')).toMatchObject({ reason: 'CEL policy returned 7, not a bool' });
    expect(evaluate('"no"')).toMatchObject({ reason: 'CEL policy returned "no", not a bool' });
    expect(evaluate('null')).toMatchObject({ reason: 'CEL policy returned null, not a bool' });
    expect(evaluate('{"a": 1}')).toMatchObject({ reason: 'CEL policy returned object, not a bool' });
    expect(evaluate(`"${'x'.repeat(60)}"`)).toMatchObject({
      reason: `CEL policy returned "${'x'.repeat(50)}...", not a bool`,
    });
    const missing = evaluate('x.y == 1', { x: {} });
    expect(missing).toMatchObject({ passed: false, reason: 'CEL evaluation failed: field not found: y' });
    expect(evaluate('x', { x: Symbol('s') })).toMatchObject({
      passed: false,
      reason: 'CEL evaluation failed: unsupported input symbol',
    });
  });

  it('refuse empty, oversized and unparsable expressions', () => {
    const limits = { costLimit: DEFAULT_CEL_COST_LIMIT };
    expect(() => compileCel('  ', limits)).toThrow('the CEL expression is empty');
    expect(() => compileCel(`true${' '.repeat(70_000)}`, limits)).toThrow('longer than 65536 characters');
    expect(() => compileCel('1 +', limits)).toThrow('<input>:1:3');
  });
});

// Issue 21: three nested all() over 200 elements (8 million steps) evaluated for 6.4 s on the
// event loop. Every comprehension step counts; past the limit the evaluation stops and fails.
describe('the cost limit of a CEL evaluation', () => {
  const l = Array.from({ length: 200 }, (_, i) => i);
  const heavy = 'l.all(a, l.all(b, l.all(c, a + b + c >= 0)))';
  const stopped = (limit: number) => ({
    passed: false,
    reason: `CEL evaluation stopped: it exceeded the cost limit of ${limit} comprehension steps`,
  });

  it('stops three nested all() over 200 elements, and fails the policy', () => {
    expect(compileCel(heavy, { costLimit: 10_000 }).evaluate({ l })).toEqual(stopped(10_000));
  });

  it('counts every step of every macro, nested or in a map literal, and nothing else', () => {
    const at = (limit: number, source: string) => compileCel(source, { costLimit: limit }).evaluate({ l });
    // 200 + 200 * 200 steps: within 40,200, not within 40,199.
    const two = 'l.all(a, l.all(b, a + b >= 0))';
    expect(at(40_200, two)).toEqual({ passed: true });
    expect(at(40_199, two)).toEqual(stopped(40_199));
    const macros =
      'l.exists(x, x == 199) && l.map(x, x * 2.0).filter(y, y > 10.0).size() == 194 && l.exists_one(x, x == 3)';
    expect(at(1_000, macros)).toEqual({ passed: true });
    expect(at(799, macros)).toEqual(stopped(799));
    expect(at(1_000, '{"k": l.all(a, l.all(b, a >= 0))}["k"]')).toEqual(stopped(1_000));
    expect(at(1_000, 'google.protobuf.Duration{seconds: l.map(a, l.map(b, b)).size()} != null')).toEqual(
      stopped(1_000),
    );
    // No comprehension, no step: any size of input is one evaluation.
    expect(at(0, 'size(l) == 200 && l[199] == 199')).toEqual({ passed: true });
  });

  it('fails even when the expression makes light of the error it got', () => {
    const limits = { costLimit: 1_000 };
    expect(compileCel(`${heavy} || true`, limits).evaluate({ l })).toEqual(stopped(1_000));
    // Short-circuited before any step: nothing exceeded.
    expect(compileCel(`true || ${heavy}`, limits).evaluate({ l })).toEqual({ passed: true });
    // Each evaluation has the whole budget.
    const program = compileCel('l.all(a, a >= 0)', { costLimit: 200 });
    expect(program.evaluate({ l })).toEqual({ passed: true });
    expect(program.evaluate({ l })).toEqual({ passed: true });
  });
});

describe("a CEL worker's requests", () => {
  it('compile, evaluate, and keep at most the programs and source bytes allowed', () => {
    const cache = new CelProgramCache({ costLimit: 100 }, { maxEntries: 2, maxSourceBytes: 20 });
    const handle = celRequestHandler(cache);
    expect(handle({ op: 'compile', source: '1 +' })).toMatchObject({
      ok: false,
      error: expect.stringContaining('<input>:1:3'),
    });
    expect(handle({ op: 'compile', source: 'x == 1' })).toEqual({ ok: true });
    expect(handle({ op: 'eval', source: 'x == 1', bindings: { x: 1 } })).toEqual({
      ok: true,
      outcome: { passed: true },
    });
    expect(handle({ op: 'eval', source: '1 +', bindings: {} })).toEqual({
      ok: true,
      outcome: { passed: false, reason: expect.stringMatching(/^CEL evaluation failed: .*<input>:1:3/) },
    });
    expect(cache.get('x == 1')).toBe(cache.get('x == 1'));
    cache.get('x == 2');
    cache.get('x == 3');
    expect(cache.size).toBe(2);
    // 6 + 17 bytes: past 20, the oldest go.
    cache.get('true || true || x');
    expect(cache.size).toBe(1);
    const none = new CelProgramCache({ costLimit: 100 }, { maxEntries: 0, maxSourceBytes: 0 });
    expect(celRequestHandler(none)({ op: 'compile', source: 'true' })).toEqual({ ok: true });
    expect(none.size).toBe(0);
  });
});

describe('predicate types', () => {
  it('map cosign short names to URIs and leave URIs alone', () => {
    expect(predicateTypeURI('slsaprovenance1')).toBe('https://slsa.dev/provenance/v1');
    expect(predicateTypeURI('vuln')).toBe('https://cosign.sigstore.dev/attestation/vuln/v1');
    expect(predicateTypeURI('custom')).toBe('https://cosign.sigstore.dev/attestation/v1');
    expect(predicateTypeURI('https://example.com/p')).toBe('https://example.com/p');
    expect(predicateTypeURI('toString')).toBe('toString');
    expect(Object.keys(PREDICATE_TYPES)).toEqual([
      'custom',
      'slsaprovenance',
      'slsaprovenance02',
      'slsaprovenance1',
      'spdx',
      'spdxjson',
      'cyclonedx',
      'link',
      'vuln',
      'openvex',
    ]);
  });
});
