import { freePort, type ManagedProcess, type ProcessGroup } from '@signet/testbed';
import type { ClusterPki } from './pki.js';

export interface ApiServerOptions {
  readonly group: ProcessGroup;
  readonly binary: string;
  readonly env: NodeJS.ProcessEnv;
  readonly pki: ClusterPki;
  readonly etcdUrl: string;
  /** Service ClusterIPs; must not overlap kwok's pod CIDR. */
  readonly serviceClusterIpRange?: string;
  readonly readyTimeoutMs?: number;
  /** More flags, after the ones below (e.g. `--admission-control-config-file`). */
  readonly extraArgs?: readonly string[];
  /** Default: a free one. A restart listens where it listened before. */
  readonly port?: number;
}

export interface RunningApiServer {
  /** `https://127.0.0.1:PORT` */
  readonly url: string;
  readonly port: number;
  readonly process: ManagedProcess;
}

export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** The flags, one reason each. */
export function apiServerArgs(options: ApiServerOptions, port: number): string[] {
  const { pki } = options;
  return [
    `--etcd-servers=${options.etcdUrl}`,
    // Loopback only; the advertised address is only used for the `kubernetes` Service, see below.
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${port}`,
    `--tls-cert-file=${pki.servingCertFile}`,
    `--tls-private-key-file=${pki.servingKeyFile}`,
    `--cert-dir=${options.group.runDir}`,
    // Identities: static bearer tokens (admin in system:masters, controller-manager, scheduler, kwok),
    // and client certificates the cluster CA signed (kubeconfig-auth.test.ts).
    `--token-auth-file=${pki.tokenFile}`,
    `--client-ca-file=${pki.caFile}`,
    // ServiceAccount tokens: kube-controller-manager's per-controller credentials are TokenRequests.
    `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
    `--service-account-key-file=${pki.serviceAccountPublicKeyFile}`,
    `--service-account-signing-key-file=${pki.serviceAccountKeyFile}`,
    `--service-cluster-ip-range=${options.serviceClusterIpRange ?? '10.96.0.0/16'}`,
    '--authorization-mode=Node,RBAC',
    // Both webhook plugins are on by default in 1.36; naming them keeps the intent visible.
    '--enable-admission-plugins=NamespaceLifecycle,ServiceAccount,MutatingAdmissionWebhook,ValidatingAdmissionWebhook',
    // Endpoints for the `kubernetes` Service would carry 127.0.0.1, which validation rejects as
    // loopback; nothing in the tests needs in-cluster access to the API server.
    '--endpoint-reconciler-type=none',
    '--allow-privileged=true',
    '--profiling=false',
    ...(options.extraArgs ?? []),
  ];
}

/** kube-apiserver on a free loopback port; ready when `/readyz` answers 200 to the admin token. */
export async function startApiServer(options: ApiServerOptions): Promise<RunningApiServer> {
  const port = options.port ?? (await freePort());
  const url = `https://127.0.0.1:${port}`;
  const process = await options.group.start({
    name: 'kube-apiserver',
    command: options.binary,
    args: apiServerArgs(options, port),
    env: options.env,
    ready: {
      kind: 'http',
      url: `${url}/readyz`,
      ca: options.pki.caPem,
      headers: { authorization: `Bearer ${options.pki.tokens.admin}` },
    },
    readyTimeoutMs: options.readyTimeoutMs ?? 90_000,
  });
  return { url, port, process };
}
