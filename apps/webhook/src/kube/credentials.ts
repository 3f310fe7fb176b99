// Where the API server is and how to authenticate to it, from a kubeconfig file or, inside a Pod,
// from the ServiceAccount the kubelet mounts: the same order as kubectl (`--kubeconfig`,
// `$KUBECONFIG`, `~/.kube/config`, in-cluster).
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';
import { InputError, NoClusterError } from '../errors.js';

export interface KubeCredentials {
  readonly server: string;
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  /** A bearer token, read when needed (a mounted ServiceAccount token is rotated by the kubelet). */
  readonly token?: () => string | undefined;
  readonly insecureSkipTlsVerify?: boolean;
  /** Where they came from, for messages. */
  readonly source: string;
}

const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

type Json = Record<string, unknown>;

/** Reads a file again at most once a minute. */
function rereading(path: string): () => string | undefined {
  let value: string | undefined;
  let readAt = 0;
  return () => {
    if (value === undefined || Date.now() - readAt > 60_000) {
      value = readFileSync(path, 'utf8').trim();
      readAt = Date.now();
    }
    return value;
  };
}

function inCluster(env: NodeJS.ProcessEnv, root: string): KubeCredentials | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port || !existsSync(join(root, 'token'))) return undefined;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    server: `https://${hostPart}:${port}`,
    ca: readFileSync(join(root, 'ca.crt')),
    token: rereading(join(root, 'token')),
    source: 'the in-cluster ServiceAccount',
  };
}

function named(list: unknown, name: string, what: string, file: string): Json {
  const entry = (Array.isArray(list) ? list : []).find((item: Json) => item?.name === name) as
    | Json
    | undefined;
  if (entry === undefined || typeof entry[what] !== 'object' || entry[what] === null)
    throw new InputError(`${file}: no ${what} named ${JSON.stringify(name)}`);
  return entry[what] as Json;
}

function bytes(entry: Json, key: string, dir: string): Buffer | undefined {
  const data = entry[`${key}-data`];
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64');
  const path = entry[key];
  if (typeof path === 'string' && path !== '') return readFileSync(isAbsolute(path) ? path : join(dir, path));
  return undefined;
}

function currentContext(config: Json, file: string): string {
  const current = config['current-context'];
  if (typeof current !== 'string' || current === '') throw new InputError(`${file}: no current-context`);
  return current;
}

/**
 * The credentials of a kubeconfig file's current context (or of `contextName`, `signet audit
 * --context`). Throws InputError for what it cannot use.
 */
export function fromKubeconfig(file: string, requested = ''): KubeCredentials {
  let config: Json;
  try {
    config = parse(readFileSync(file, 'utf8')) as Json;
  } catch (error) {
    throw new InputError(`cannot read the kubeconfig ${file}: ${(error as Error).message.split('\n')[0]}`, {
      cause: error,
    });
  }
  const dir = dirname(file);
  const contextName = requested || currentContext(config, file);
  const context = named(config.contexts, contextName, 'context', file);
  const cluster = named(config.clusters, String(context.cluster), 'cluster', file);
  const user = context.user === undefined ? {} : named(config.users, String(context.user), 'user', file);
  if (typeof cluster.server !== 'string')
    throw new InputError(`${file}: cluster ${String(context.cluster)} has no server`);
  if (user.exec !== undefined || user['auth-provider'] !== undefined) {
    throw new InputError(
      `${file}: user ${String(context.user)} authenticates with a credential plugin, which signet does not run; use a token or a client certificate (or run Signet in the cluster)`,
    );
  }
  const ca = bytes(cluster, 'certificate-authority', dir);
  const cert = bytes(user, 'client-certificate', dir);
  const key = bytes(user, 'client-key', dir);
  const tokenFile = typeof user.tokenFile === 'string' ? user.tokenFile : undefined;
  const token =
    typeof user.token === 'string' && user.token !== ''
      ? () => user.token as string
      : tokenFile
        ? rereading(isAbsolute(tokenFile) ? tokenFile : join(dir, tokenFile))
        : undefined;
  return {
    server: cluster.server,
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(token ? { token } : {}),
    ...(cluster['insecure-skip-tls-verify'] === true ? { insecureSkipTlsVerify: true } : {}),
    source: `${file} (context ${contextName})`,
  };
}

/**
 * The cluster Signet talks to: `path`, else the first file of `$KUBECONFIG`, else `~/.kube/config`
 * when it exists, else the in-cluster ServiceAccount.
 */
export function loadKubeCredentials(
  path: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  serviceAccountRoot = SERVICE_ACCOUNT,
  context?: string,
): KubeCredentials {
  if (path !== undefined) return fromKubeconfig(path, context);
  const fromEnv = env.KUBECONFIG?.split(':').find((f) => f !== '' && existsSync(f));
  if (fromEnv) return fromKubeconfig(fromEnv, context);
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  if (existsSync(home)) return fromKubeconfig(home, context);
  if (context !== undefined) throw new InputError(`--context ${context}: no kubeconfig to find it in`);
  const cluster = inCluster(env, serviceAccountRoot);
  if (cluster) return cluster;
  throw new NoClusterError(
    'no cluster to talk to: give --kubeconfig, set KUBECONFIG, or run in a Pod with a ServiceAccount',
  );
}
