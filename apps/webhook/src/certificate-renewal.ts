// When a certificate is due for renewal, read with Node's own X.509 parser: self-managed TLS checks
// this at every start and hour, and loads the certificate-issuing code (@peculiar/x509 and its
// ASN.1 modules, about 200) only when it must issue one.
import { X509Certificate } from 'node:crypto';

/** Two thirds into the certificate's validity (PEM). */
export function renewalTime(pem: string): Date {
  const cert = new X509Certificate(pem);
  const start = cert.validFromDate.getTime();
  return new Date(start + ((cert.validToDate.getTime() - start) * 2) / 3);
}
