import { describe, expect, it } from 'vitest';
import { compileCel } from '../../src/policy/cel.js';
import { PREDICATE_TYPES, predicateTypeURI } from '../../src/policy/predicate-types.js';

describe('CEL policies', () => {
  it('pass only on true', () => {
    const evaluate = (source: string, bindings: Record<string, unknown> = {}) =>
      compileCel(source).evaluate(bindings);
    expect(evaluate('x.startsWith("a") && x.lowerAscii() == "ab"', { x: 'aB' })).toEqual({ passed: true });
    expect(evaluate('false')).toEqual({ passed: false, reason: 'CEL policy returned false' });
    expect(evaluate('1.5')).toMatchObject({ reason: 'CEL policy returned 1.5, not a bool' });
    expect(evaluate('7')).toMatchObject({ reason: 'CEL policy returned 7, not a bool' });
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
    expect(() => compileCel('  ')).toThrow('the CEL expression is empty');
    expect(() => compileCel(`true${' '.repeat(70_000)}`)).toThrow('longer than 65536 characters');
    expect(() => compileCel('1 +')).toThrow('<input>:1:3');
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
