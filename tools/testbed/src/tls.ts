// Certificates for the tests' TLS servers, minted in-process with @peculiar/x509 over Node's Web
// Crypto (no openssl CLI, which a minimal Debian does not have): a self-signed certificate that is
// its own CA (KMS stand-ins, HTTPS policy servers, token issuers), and a private certificate
// authority with a server certificate it issued, for registries and token servers that serve TLS
// the way a corporate CA would, so that clients must be given the CA to trust them.
import 'reflect-metadata'; // @peculiar/x509 resolves its providers with tsyringe, which needs it
import { webcrypto } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

// @peculiar/x509 takes a Web Crypto provider; Node's implements it.
const crypto = webcrypto as unknown as NonNullable<
  Parameters<typeof x509.X509CertificateGenerator.create>[1]
>;
const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

interface Minted {
  readonly certificate: x509.X509Certificate;
  readonly keys: webcrypto.CryptoKeyPair;
  readonly certificatePem: string;
  readonly keyPem: string;
}

async function newKeys(): Promise<webcrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
}

async function minted(certificate: x509.X509Certificate, keys: webcrypto.CryptoKeyPair): Promise<Minted> {
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return {
    certificate,
    keys,
    certificatePem: `${certificate.toString('pem')}\n`,
    keyPem: `${x509.PemConverter.encode(pkcs8, 'PRIVATE KEY')}\n`,
  };
}

/** Subject alternative names: IP addresses as such, anything else as a DNS name. */
function alternativeNames(hosts: readonly string[]): x509.SubjectAlternativeNameExtension {
  return new x509.SubjectAlternativeNameExtension(
    hosts.map((host) => ({ type: isIP(host) ? ('ip' as const) : ('dns' as const), value: host })),
    false,
  );
}

const validity = (days: number) => ({
  // A few minutes back: a process started this instant must not find it not yet valid.
  notBefore: new Date(Date.now() - 5 * 60_000),
  notAfter: new Date(Date.now() + days * DAY_MS),
});

/** A self-signed CA certificate (CA:TRUE), with subject alternative names when `hosts` are given. */
async function selfSigned(commonName: string, hosts: readonly string[], days: number): Promise<Minted> {
  const keys = await newKeys();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: `CN=${commonName}`,
      keys,
      ...validity(days),
      signingAlgorithm: SIGNING,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
        ...(hosts.length > 0 ? [alternativeNames(hosts)] : []),
      ],
    },
    crypto,
  );
  return minted(certificate, keys);
}

/** A server certificate for `hosts` issued by `ca`. */
async function issued(ca: Minted, hosts: readonly string[], days: number): Promise<Minted> {
  const keys = await newKeys();
  const certificate = await x509.X509CertificateGenerator.create(
    {
      subject: `CN=${hosts[0] ?? 'localhost'}`,
      issuer: ca.certificate.subject,
      publicKey: keys.publicKey,
      signingKey: ca.keys.privateKey,
      ...validity(days),
      signingAlgorithm: SIGNING,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
        alternativeNames(hosts),
        await x509.AuthorityKeyIdentifierExtension.create(ca.certificate, false, crypto),
      ],
    },
    crypto,
  );
  return minted(certificate, keys);
}

/** A self-signed server certificate for 127.0.0.1 and localhost. */
export interface ServerCertificate {
  readonly certPath: string;
  readonly keyPath: string;
  /** The certificate itself, which is also the CA clients trust. */
  readonly pem: string;
  /** Its private key, PKCS#8 PEM (ECDSA P-256). */
  readonly keyPem: string;
}

/**
 * A self-signed certificate (CA:TRUE, ECDSA P-256, valid 2 days) with common name `name` for
 * `hosts` (default 127.0.0.1 and localhost), written to `<dir>/<name>.crt` and `<dir>/<name>.key`.
 */
export async function mintServerCertificate(
  dir: string,
  name = 'server',
  hosts: readonly string[] = ['127.0.0.1', 'localhost'],
): Promise<ServerCertificate> {
  await mkdir(dir, { recursive: true });
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  const certificate = await selfSigned(name, hosts, 2);
  await writeFile(certPath, certificate.certificatePem);
  await writeFile(keyPath, certificate.keyPem, { mode: 0o600 });
  return { certPath, keyPath, pem: certificate.certificatePem, keyPem: certificate.keyPem };
}

export interface PrivateCa {
  /** PEM of the CA certificate: what a client must be given to trust the server. */
  readonly caPem: string;
  readonly caFile: string;
  /** The server certificate (PEM file), issued by the CA for `hosts`. */
  readonly certificateFile: string;
  readonly keyFile: string;
  readonly certificatePem: string;
  readonly keyPem: string;
}

/**
 * A new CA in `dir` and a server certificate for `hosts` (IP addresses and DNS names, as subject
 * alternative names), valid for a day: `<name>-ca.pem`, `<name>-ca.key`, `<name>-cert.pem`,
 * `<name>-key.pem`.
 */
export async function createPrivateCa(
  dir: string,
  hosts: readonly string[],
  name = 'server',
): Promise<PrivateCa> {
  await mkdir(dir, { recursive: true });
  const file = (suffix: string) => join(dir, `${name}-${suffix}`);
  const ca = await selfSigned(`Signet test CA ${name}`, [], 1);
  const server = await issued(ca, hosts, 1);
  await writeFile(file('ca.pem'), ca.certificatePem);
  await writeFile(file('ca.key'), ca.keyPem, { mode: 0o600 });
  await writeFile(file('cert.pem'), server.certificatePem);
  await writeFile(file('key.pem'), server.keyPem, { mode: 0o600 });
  return {
    caPem: ca.certificatePem,
    caFile: file('ca.pem'),
    certificateFile: file('cert.pem'),
    keyFile: file('key.pem'),
    certificatePem: server.certificatePem,
    keyPem: server.keyPem,
  };
}
