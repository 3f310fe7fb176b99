// @peculiar/x509 resolves its providers with tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
// @peculiar/x509 takes a Web Crypto provider; Node's implements it.
const crypto = webcrypto as unknown as NonNullable<
  Parameters<typeof x509.X509CertificateGenerator.create>[1]
>;
const subtle = webcrypto.subtle;
const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

export interface IssuedCertificate {
  /** PEM certificate. */
  readonly cert: string;
  /** PEM PKCS#8 private key. */
  readonly key: string;
  readonly notAfter: Date;
}

async function keyPair(): Promise<CryptoKeyPair> {
  return (await subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function pemKey(key: CryptoKey): Promise<string> {
  const der = await subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

async function importKey(pem: string): Promise<CryptoKey> {
  return subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(pem), EC, true, ['sign']);
}

/** A self-signed ECDSA P-256 CA for the webhook's serving certificates. */
export async function createCertificateAuthority(
  commonName: string,
  validDays: number,
  now = new Date(),
): Promise<IssuedCertificate> {
  const keys = await keyPair();
  const notAfter = new Date(now.getTime() + validDays * DAY_MS);
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: `CN=${commonName}`,
      keys,
      notBefore: new Date(now.getTime() - 5 * 60_000),
      notAfter,
      signingAlgorithm: SIGNING,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  return { cert: cert.toString('pem'), key: await pemKey(keys.privateKey), notAfter };
}

/** A serving certificate for `names` (DNS names or IP addresses) signed by `ca`. */
export async function issueServingCertificate(
  ca: IssuedCertificate,
  names: readonly string[],
  validDays: number,
  now = new Date(),
): Promise<IssuedCertificate> {
  if (names.length === 0) throw new Error('a serving certificate needs at least one DNS name or IP address');
  const caCert = new x509.X509Certificate(ca.cert);
  const keys = await keyPair();
  const notAfter = new Date(Math.min(now.getTime() + validDays * DAY_MS, caCert.notAfter.getTime()));
  const cert = await x509.X509CertificateGenerator.create(
    {
      subject: `CN=${names[0]}`,
      issuer: caCert.subject,
      publicKey: keys.publicKey,
      signingKey: await importKey(ca.key),
      notBefore: new Date(now.getTime() - 5 * 60_000),
      notAfter,
      signingAlgorithm: SIGNING,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
          true,
        ),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
        new x509.SubjectAlternativeNameExtension(
          names.map((name) => ({ type: isIP(name) ? ('ip' as const) : ('dns' as const), value: name })),
          false,
        ),
        await x509.AuthorityKeyIdentifierExtension.create(caCert, false, crypto),
      ],
    },
    crypto,
  );
  return { cert: cert.toString('pem'), key: await pemKey(keys.privateKey), notAfter };
}

/**
 * A client certificate for `commonName` signed by `ca`, for TLS client authentication (the API
 * server's certificate for the admission port's mutual TLS, in tests and examples).
 */
export async function issueClientCertificate(
  ca: IssuedCertificate,
  commonName: string,
  validDays: number,
  now = new Date(),
): Promise<IssuedCertificate> {
  const caCert = new x509.X509Certificate(ca.cert);
  const keys = await keyPair();
  const notAfter = new Date(Math.min(now.getTime() + validDays * DAY_MS, caCert.notAfter.getTime()));
  const cert = await x509.X509CertificateGenerator.create(
    {
      subject: `CN=${commonName}`,
      issuer: caCert.subject,
      publicKey: keys.publicKey,
      signingKey: await importKey(ca.key),
      notBefore: new Date(now.getTime() - 5 * 60_000),
      notAfter,
      signingAlgorithm: SIGNING,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], false),
        await x509.AuthorityKeyIdentifierExtension.create(caCert, false, crypto),
      ],
    },
    crypto,
  );
  return { cert: cert.toString('pem'), key: await pemKey(keys.privateKey), notAfter };
}

/** When a certificate is due for renewal: after two thirds of its lifetime. */

export { renewalTime } from './certificate-renewal.js';
