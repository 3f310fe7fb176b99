import { expect, it } from 'vitest';
import { policyModeOf } from '../../src/index.js';

it('a policy enforces unless it says warn', () => {
  expect(policyModeOf({ spec: {} })).toBe('enforce');
  expect(policyModeOf({ spec: { mode: 'warn' } })).toBe('warn');
  expect(policyModeOf({ spec: { mode: 'enforce' } })).toBe('enforce');
});
