// Which cluster Signet talks to, and as whom: a client-node `KubeConfig`, found in kubectl's order
// (`--kubeconfig`, `$KUBECONFIG`, `~/.kube/config`, then the in-cluster ServiceAccount). Everything
// a kubeconfig user can be is client-node's to run: client certificates, tokens, `exec` credential
// plugins, OIDC and other auth-providers, the ServiceAccount token the kubelet rotates. Signet adds
// only its rules: never fall back to `http://localhost:8080`, name a missing context, and read
// kubectl's `tokenFile` again as it rotates.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { KubeConfig, type User } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { InputError, NoClusterError } from '../errors.js';
import { ConnectionReusingKubeConfig } from './reused-connections.js';

/** Where the cluster is: what `--kubeconfig` and `--context` say. */
export interface KubeAccessOptions {
  /** A kubeconfig file; default `$KUBECONFIG`, else `~/.kube/config`, else the in-cluster ServiceAccount. */
  readonly kubeconfig?: string | undefined;
  /** A context of that kubeconfig; default its `current-context`. */
  readonly context?: string | undefined;
}

export interface LoadedKubeConfig {
  readonly config: KubeConfig;
  /** Where it came from, for messages: a file and context, or the in-cluster ServiceAccount. */
  readonly source: string;
}

/** Where the kubelet mounts the ServiceAccount (client-node reads it below this prefix). */
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * The cluster to talk to, as the environment (`KUBECONFIG`, `HOME`, `KUBERNETES_SERVICE_HOST`)
 * says when `options` do not. Throws InputError for what cannot be used: no cluster anywhere, an
 * unreadable file, an unknown context. Credential plugins run when a request first needs them.
 * `serviceAccountPrefix` moves the ServiceAccount mount (tests).
 */
export function loadKubeConfig(options: KubeAccessOptions = {}, serviceAccountPrefix = ''): LoadedKubeConfig {
  const files = kubeconfigFiles(options.kubeconfig, process.env);
  if (files.length === 0) {
    if (options.context !== undefined)
      throw new InputError(`--context ${options.context}: no kubeconfig to find it in`);
    return inCluster(serviceAccountPrefix);
  }
  // Calls through it reuse kept-alive connections to the API server (reused-connections.ts).
  const config = new ConnectionReusingKubeConfig();
  for (const [index, file] of files.entries()) {
    const one = new KubeConfig();
    try {
      one.loadFromFile(file);
    } catch (error) {
      throw new InputError(`cannot read the kubeconfig ${file}: ${(error as Error).message.split('\n')[0]}`, {
        cause: error,
      });
    }
    rotateTokenFiles(one, file);
    if (index === 0) config.loadFromOptions(optionsOf(one));
    else mergeInto(config, one);
  }
  const contextName = options.context ?? config.getCurrentContext();
  const where = files.join(delimiter);
  if (!contextName) throw new InputError(`${where}: no current-context`);
  const context = config.getContextObject(contextName);
  if (context === null) throw new InputError(`${where}: no context named ${JSON.stringify(contextName)}`);
  config.setCurrentContext(contextName);
  if (config.getCluster(context.cluster) === null)
    throw new InputError(`${where}: no cluster named ${JSON.stringify(context.cluster)}`);
  if (context.user && config.getUser(context.user) === null)
    throw new InputError(`${where}: no user named ${JSON.stringify(context.user)}`);
  return { config, source: `${where} (context ${contextName})` };
}

/** `path`, else the existing files of `$KUBECONFIG`, else `~/.kube/config` when it exists. */
function kubeconfigFiles(path: string | undefined, env: NodeJS.ProcessEnv): string[] {
  if (path !== undefined) return [path];
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== '' && existsSync(f));
  if (listed.length > 0) return listed;
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  return existsSync(home) ? [home] : [];
}

function inCluster(serviceAccountPrefix: string): LoadedKubeConfig {
  const { KUBERNETES_SERVICE_HOST: host, KUBERNETES_SERVICE_PORT: port } = process.env;
  if (!host || !port || !existsSync(`${serviceAccountPrefix}${SERVICE_ACCOUNT_TOKEN}`))
    throw new NoClusterError(
      'no cluster to talk to: give --kubeconfig, set KUBECONFIG, or run in a Pod with a ServiceAccount',
    );
  const config = new ConnectionReusingKubeConfig();
  // Its user reads the token file again every minute: the kubelet rotates it.
  config.loadFromCluster(serviceAccountPrefix);
  return { config, source: 'the in-cluster ServiceAccount' };
}

function optionsOf(config: KubeConfig) {
  return {
    clusters: config.getClusters(),
    users: config.getUsers(),
    contexts: config.getContexts(),
    currentContext: config.getCurrentContext(),
  };
}

/** `$KUBECONFIG` lists several files: as kubectl, the first to name a cluster, user or context wins. */
function mergeInto(config: KubeConfig, other: KubeConfig): void {
  const has = (list: readonly { name: string }[], name: string) => list.some((entry) => entry.name === name);
  for (const cluster of other.getClusters())
    if (!has(config.getClusters(), cluster.name)) config.addCluster(cluster);
  for (const user of other.getUsers()) if (!has(config.getUsers(), user.name)) config.addUser(user);
  for (const context of other.getContexts())
    if (!has(config.getContexts(), context.name)) config.addContext(context);
}

/**
 * kubectl's `tokenFile` (a token a sidecar or the kubelet rotates) is read by client-node only as
 * `token-file`, once. Its users get client-node's token-file authenticator instead, which reads
 * the file again every minute, as it does for the in-cluster ServiceAccount.
 */
function rotateTokenFiles(config: KubeConfig, file: string): void {
  const raw = parse(readFileSync(file, 'utf8')) as {
    users?: { name?: unknown; user?: { tokenFile?: unknown } }[];
  };
  const tokenFiles = new Map<string, string>();
  for (const entry of Array.isArray(raw?.users) ? raw.users : []) {
    const tokenFile = entry?.user?.tokenFile;
    if (typeof entry?.name === 'string' && typeof tokenFile === 'string' && tokenFile !== '')
      tokenFiles.set(entry.name, isAbsolute(tokenFile) ? tokenFile : join(dirname(file), tokenFile));
  }
  if (tokenFiles.size === 0) return;
  const users: User[] = config.getUsers().map((user) => {
    const tokenFile = tokenFiles.get(user.name);
    return tokenFile === undefined || user.token || user.authProvider || user.exec
      ? user
      : { ...user, authProvider: { name: 'tokenFile', config: { tokenFile } } };
  });
  config.loadFromOptions({ ...optionsOf(config), users });
}
