import { describe, expect, it } from 'vitest';
import { auditServeConfigFrom } from '../../src/audit/audit-flags.js';
import { UsageError } from '../../src/errors.js';

describe('signet serve audit flags', () => {
  it("reads them (the Lease identity is the server's: see serve-config.test.ts)", () => {
    expect(
      auditServeConfigFrom({
        'audit-interval': '30m',
        'audit-all-namespaces': true,
        'audit-concurrency': '2',
        'audit-max-results': '50',
        'audit-lease': 'scan',
      }),
    ).toEqual({
      intervalMs: 1_800_000,
      allNamespaces: true,
      concurrency: 2,
      maxResults: 50,
      leaseName: 'scan',
    });
    expect(auditServeConfigFrom({ 'audit-interval': '0' }).intervalMs).toBe(0);
  });

  it.each([
    [{ 'audit-interval': 'hourly' }, '--audit-interval must be a duration like 1h or 0, got "hourly"'],
    [{ 'audit-interval': '1s' }, '--audit-interval must be at least 10s (or 0), got "1s"'],
    [{ 'audit-concurrency': '0' }, '--audit-concurrency must be a whole number from 1 to 64, got "0"'],
    [{ 'audit-max-results': '1e9' }, '--audit-max-results must be a whole number from 1 to 5000, got "1e9"'],
    [{ 'audit-lease': 'Not_A_Name' }, '--audit-lease must be a Kubernetes object name, got "Not_A_Name"'],
  ])('refuses %j', (flags, message) => {
    expect(() => auditServeConfigFrom(flags)).toThrow(new UsageError(message));
  });
});
