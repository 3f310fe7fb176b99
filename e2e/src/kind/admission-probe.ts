import type { TestCluster } from '../providers/test-cluster.js';

export interface ProbeAttempt {
  readonly pod: string;
  readonly at: number;
  readonly ok: boolean;
  /** kubectl's error output when the create failed. */
  readonly error: string;
}

export interface AdmissionProbe {
  /** Stops creating Pods and resolves with every attempt once the last one and every delete finished. */
  stop(): Promise<readonly ProbeAttempt[]>;
}

/**
 * Creates a Pod of `image` in `namespace` every `intervalMs` (and deletes it again without
 * waiting), so the webhook is asked continuously while something happens to it or to the nodes.
 * Every create goes through the API server's admission chain like any user's; one that fails (a
 * webhook that cannot be reached, a denial) is recorded with kubectl's message.
 */
export function startAdmissionProbe(
  cluster: TestCluster,
  options: {
    readonly namespace: string;
    readonly image: string;
    readonly intervalMs?: number;
    readonly prefix?: string;
  },
): AdmissionProbe {
  const attempts: ProbeAttempt[] = [];
  const deletions: Promise<unknown>[] = [];
  const interval = options.intervalMs ?? 1_000;
  let running = true;
  let count = 0;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      count += 1;
      const pod = `${options.prefix ?? 'probe'}-${count}`;
      const manifest = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: pod, namespace: options.namespace, labels: { 'signet-e2e/probe': 'true' } },
        spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: options.image }] },
      };
      const result = await cluster.kubectl(['create', '-f', '-'], {
        input: JSON.stringify(manifest),
        timeoutMs: 45_000,
      });
      attempts.push({ pod, at: started, ok: result.exitCode === 0, error: result.stderr.trim() });
      if (result.exitCode === 0) {
        deletions.push(
          cluster.kubectl(['delete', 'pod', pod, '--namespace', options.namespace, '--wait=false']),
        );
      }
      const wait = interval - (Date.now() - started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      await Promise.allSettled(deletions);
      return attempts;
    },
  };
}
