import { spawn } from 'node:child_process';
import { stringify } from 'yaml';
import { ClusterError } from './errors.js';

export interface KubectlResult {
  readonly stdout: string;
  readonly stderr: string;
  /** The exit code; a refusal by the API server (an admission denial, say) is a non-zero code, not an exception. */
  readonly exitCode: number;
}

export interface KubectlRunOptions {
  /** Written to kubectl's standard input (`-f -`). */
  readonly input?: string;
  /** Killed after this long; default 60 s. A timeout throws. */
  readonly timeoutMs?: number;
}

/** Manifests for `apply`: YAML text (one or more documents) or objects. */
export type Manifests = string | object | readonly object[];

/** The pinned kubectl, pointed at one kubeconfig and nothing else from the user's environment. */
export class Kubectl {
  readonly binary: string;
  readonly kubeconfig: string;
  readonly #env: NodeJS.ProcessEnv;

  constructor(options: { readonly binary: string; readonly kubeconfig: string; readonly home: string }) {
    this.binary = options.binary;
    this.kubeconfig = options.kubeconfig;
    // A private HOME: no ~/.kube/cache, no user plugins or aliases.
    this.#env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: options.home,
      KUBECONFIG: options.kubeconfig,
    };
  }

  /** Runs `kubectl <args>` and reports how it ended; never throws because of the exit code. */
  run(args: readonly string[], options: KubectlRunOptions = {}): Promise<KubectlResult> {
    const fullArgs = ['--kubeconfig', this.kubeconfig, ...args];
    const timeoutMs = options.timeoutMs ?? 60_000;
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, fullArgs, { env: this.#env, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(
          new ClusterError('KUBECTL_FAILED', `could not run kubectl: ${error.message}`, { cause: error }),
        );
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (code === null) {
          const why =
            signal === 'SIGKILL' ? `did not finish within ${timeoutMs} ms` : `was killed by ${signal}`;
          reject(new ClusterError('KUBECTL_FAILED', `kubectl ${args.join(' ')} ${why}\n${stderr}`));
          return;
        }
        resolve({ stdout, stderr, exitCode: code });
      });
      child.stdin.on('error', () => {
        // kubectl may exit before reading its input; the exit code says what happened.
      });
      child.stdin.end(options.input ?? '');
    });
  }

  /** Runs kubectl and returns its output; a non-zero exit throws with kubectl's error output. */
  async ok(args: readonly string[], options: KubectlRunOptions = {}): Promise<string> {
    const result = await this.run(args, options);
    if (result.exitCode !== 0) {
      throw new ClusterError(
        'KUBECTL_FAILED',
        `kubectl ${args.join(' ')} exited with code ${result.exitCode}: ${result.stderr.trim() || result.stdout.trim()}`,
      );
    }
    return result.stdout;
  }

  /** `kubectl get ... -o json`, parsed. */
  async getJson<T = unknown>(args: readonly string[]): Promise<T> {
    return JSON.parse(await this.ok(['get', ...args, '-o', 'json'])) as T;
  }

  /** `kubectl apply -f -` of YAML text or objects; a refusal throws with the API server's message. */
  apply(manifests: Manifests): Promise<string> {
    return this.ok(['apply', '-f', '-'], { input: manifestText(manifests) });
  }
}

/** YAML documents for kubectl's standard input. */
export function manifestText(manifests: Manifests): string {
  if (typeof manifests === 'string') return manifests;
  const objects: readonly object[] = Array.isArray(manifests) ? manifests : [manifests];
  return objects.map((object) => stringify(object)).join('---\n');
}
