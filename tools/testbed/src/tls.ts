// A private certificate authority and a server certificate it issued, minted with the openssl
// CLI: for registries and token servers that serve TLS the way a corporate CA would, so that
// clients must be given the CA to trust them.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TestbedError } from './errors.js';
import { runCommand } from './exec.js';

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
 * alternative names), valid for a day. Needs the `openssl` CLI (Debian package `openssl`).
 */
export async function createPrivateCa(
  dir: string,
  hosts: readonly string[],
  name = 'server',
): Promise<PrivateCa> {
  const file = (suffix: string) => join(dir, `${name}-${suffix}`);
  const run = async (args: string[]) => {
    try {
      await runCommand('openssl', args, { timeoutMs: 30_000 });
    } catch (error) {
      throw new TestbedError(
        'COMMAND_FAILED',
        'minting a private CA needs the openssl CLI (Debian package `openssl`)',
        {
          cause: error,
        },
      );
    }
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await run([
    'req',
    '-x509',
    ...ec,
    '-days',
    '1',
    '-subj',
    `/CN=Signet test CA ${name}`,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
  ]);
  await run([
    'req',
    ...ec,
    '-subj',
    `/CN=${hosts[0] ?? 'localhost'}`,
    '-keyout',
    file('key.pem'),
    '-out',
    file('csr.pem'),
  ]);
  const san = hosts.map((host) => (/^[\d.]+$|:/.test(host) ? `IP:${host}` : `DNS:${host}`)).join(',');
  const extensions = file('ext.cnf');
  const { writeFile } = await import('node:fs/promises');
  await writeFile(extensions, `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  await run([
    'x509',
    '-req',
    '-in',
    file('csr.pem'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    extensions,
    '-out',
    file('cert.pem'),
  ]);
  return {
    caPem: await readFile(file('ca.pem'), 'utf8'),
    caFile: file('ca.pem'),
    certificateFile: file('cert.pem'),
    keyFile: file('key.pem'),
    certificatePem: await readFile(file('cert.pem'), 'utf8'),
    keyPem: await readFile(file('key.pem'), 'utf8'),
  };
}
