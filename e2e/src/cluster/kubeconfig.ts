import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';

export interface KubeconfigOptions {
  readonly server: string;
  readonly caPem: string;
  readonly user: string;
  /** The user's bearer token, */
  readonly token?: string;
  /** or its credentials as a kubeconfig states them (`client-certificate`, `exec`, ...). */
  readonly credentials?: Readonly<Record<string, unknown>>;
}

/** A kubeconfig with one cluster, one user (a bearer token unless told) and one current context. */
export function kubeconfigYaml(options: KubeconfigOptions): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'signet-e2e',
        cluster: {
          server: options.server,
          'certificate-authority-data': Buffer.from(options.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name: options.user, user: options.credentials ?? { token: options.token } }],
    contexts: [{ name: 'signet-e2e', context: { cluster: 'signet-e2e', user: options.user } }],
    'current-context': 'signet-e2e',
  });
}

/** Writes `kubeconfigYaml(options)` to `path` (readable by the owner only: it holds a token). */
export async function writeKubeconfig(path: string, options: KubeconfigOptions): Promise<string> {
  await writeFile(path, kubeconfigYaml(options), { mode: 0o600 });
  return path;
}
