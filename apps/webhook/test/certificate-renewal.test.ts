// When self-managed TLS renews: two thirds into a certificate's validity, read by node:crypto (the
// start-up footprint test checks the same function loads no certificate-issuing code).
import { X509Certificate } from 'node:crypto';
import { expect, it } from 'vitest';
import { renewalTime } from '../src/certificate-renewal.js';
import { createCertificateAuthority } from '../src/certificates.js';

it('renews two thirds into the validity, whatever its length', async () => {
  const now = new Date('2026-06-01T00:00:00Z');
  for (const days of [1, 30, 365]) {
    const { cert } = await createCertificateAuthority(`renewal-${days}`, days, now);
    const parsed = new X509Certificate(cert);
    const start = parsed.validFromDate.getTime();
    const end = parsed.validToDate.getTime();
    expect(renewalTime(cert).getTime()).toBe(start + ((end - start) * 2) / 3);
    expect(renewalTime(cert).getTime()).toBeGreaterThan(now.getTime());
  }
});

it('refuses what is not a certificate', () => {
  expect(() => renewalTime('-----BEGIN CERTIFICATE-----\nnot one\n-----END CERTIFICATE-----\n')).toThrow();
});
