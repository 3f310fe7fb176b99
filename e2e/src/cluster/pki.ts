import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '@signet/testbed';
import { createCertificateAuthority, issueServingCertificate } from '@signet/webhook';

/**
 * Who talks to the API server. Each has a static bearer token (`--token-auth-file`, still served by
 * kube-apiserver 1.36): simpler than client certificates and just as real for authorization, since
 * the bootstrap RBAC policy binds the user names below.
 */
export const IDENTITIES = {
  /** The tests and kubectl: cluster-admin through `system:masters`. */
  admin: { user: 'signet-e2e-admin', groups: ['system:masters'] },
  /** Bound to ClusterRole `system:kube-controller-manager` by bootstrap RBAC. With
   * `--use-service-account-credentials` it only mints tokens for the per-controller ServiceAccounts. */
  controllerManager: { user: 'system:kube-controller-manager', groups: [] },
  /** Bound to ClusterRoles `system:kube-scheduler` and `system:volume-scheduler`. */
  scheduler: { user: 'system:kube-scheduler', groups: [] },
  /** kwok writes node and pod status, leases and impersonates: cluster-admin, as kwokctl does. */
  kwok: { user: 'kwok-controller', groups: ['system:masters'] },
  /** A user whose token only a credential plugin prints (`execCredentialKubeconfig`): as EKS, GKE, AKS. */
  execPlugin: { user: 'signet-e2e-exec', groups: ['system:masters'] },
} as const satisfies Record<string, { readonly user: string; readonly groups: readonly string[] }>;

export type Identity = keyof typeof IDENTITIES;

/** Names the API server's serving certificate answers to (in-cluster names for completeness). */
export const APISERVER_NAMES = [
  '127.0.0.1',
  'localhost',
  'kubernetes',
  'kubernetes.default',
  'kubernetes.default.svc',
  'kubernetes.default.svc.cluster.local',
] as const;

/** Every file the control plane reads, and the secrets the harness needs in memory. */
export interface ClusterPki {
  /** PEM of the CA that signs every serving certificate of the cluster, and the client certificates
   * the API server accepts (`--client-ca-file`). */
  readonly caPem: string;
  readonly caFile: string;
  /** Its key (for `issueClientCertificate`). */
  readonly caKeyFile: string;
  /** One serving certificate for 127.0.0.1/localhost and the in-cluster names, used by
   * kube-apiserver, kube-controller-manager and kube-scheduler (their health endpoints are then
   * checkable with the one CA). */
  readonly servingCertFile: string;
  readonly servingKeyFile: string;
  /** RSA key pair that signs and verifies ServiceAccount tokens. */
  readonly serviceAccountKeyFile: string;
  readonly serviceAccountPublicKeyFile: string;
  /** `--token-auth-file`: `token,user,uid,"group,..."` per identity. */
  readonly tokenFile: string;
  readonly tokens: Readonly<Record<Identity, string>>;
}

/** Generates a fresh PKI into `dir` (created if missing). Nothing is reused between runs. */
export async function createClusterPki(dir: string, extraNames: readonly string[] = []): Promise<ClusterPki> {
  await mkdir(dir, { recursive: true });
  const ca = await createCertificateAuthority('signet-e2e-cluster-ca', 7);
  const serving = await issueServingCertificate(ca, [...APISERVER_NAMES, ...extraNames], 7);
  // Key generation is synchronous, but one 2048-bit key takes well under a second.
  const serviceAccount = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const tokens = Object.fromEntries(
    Object.keys(IDENTITIES).map((identity) => [identity, randomBytes(24).toString('hex')]),
  ) as Record<Identity, string>;
  const files = {
    caFile: join(dir, 'ca.crt'),
    caKeyFile: join(dir, 'ca.key'),
    servingCertFile: join(dir, 'serving.crt'),
    servingKeyFile: join(dir, 'serving.key'),
    serviceAccountKeyFile: join(dir, 'service-account.key'),
    serviceAccountPublicKeyFile: join(dir, 'service-account.pub'),
    tokenFile: join(dir, 'tokens.csv'),
  };
  const secret = { mode: 0o600 } as const;
  await Promise.all([
    writeFile(files.caFile, ca.cert),
    writeFile(files.caKeyFile, ca.key, secret),
    writeFile(files.servingCertFile, serving.cert),
    writeFile(files.servingKeyFile, serving.key, secret),
    writeFile(files.serviceAccountKeyFile, serviceAccount.privateKey, secret),
    writeFile(files.serviceAccountPublicKeyFile, serviceAccount.publicKey),
    writeFile(files.tokenFile, tokenFile(tokens), secret),
  ]);
  return { caPem: ca.cert, ...files, tokens };
}

function tokenFile(tokens: Readonly<Record<Identity, string>>): string {
  return Object.entries(IDENTITIES)
    .map(([identity, { user, groups }]) => {
      const line = `${tokens[identity as Identity]},${user},${user}`;
      return groups.length > 0 ? `${line},"${groups.join(',')}"` : line;
    })
    .map((line) => `${line}\n`)
    .join('');
}

export interface ClientCertificate {
  readonly certFile: string;
  readonly keyFile: string;
}

/**
 * A client certificate the API server authenticates as `user` in `groups` (its CN and O), signed by
 * the cluster CA with the openssl CLI, valid for a day.
 */
export async function issueClientCertificate(
  pki: ClusterPki,
  dir: string,
  user: string,
  groups: readonly string[],
): Promise<ClientCertificate> {
  const base = join(dir, user.replace(/[^A-Za-z0-9-]/g, '_'));
  const [keyFile, csrFile, certFile, extFile] = ['key', 'csr', 'crt', 'ext'].map((e) => `${base}.${e}`) as [
    string,
    string,
    string,
    string,
  ];
  const subject = `/CN=${user}${groups.map((group) => `/O=${group}`).join('')}`;
  await writeFile(extFile, 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n');
  const openssl = (args: string[]) => runCommand('openssl', args, { timeoutMs: 30_000 });
  await openssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    subject,
    '-keyout',
    keyFile,
    '-out',
    csrFile,
  ]);
  await openssl([
    'x509',
    '-req',
    '-in',
    csrFile,
    '-CA',
    pki.caFile,
    '-CAkey',
    pki.caKeyFile,
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    extFile,
    '-out',
    certFile,
  ]);
  return { certFile, keyFile };
}
