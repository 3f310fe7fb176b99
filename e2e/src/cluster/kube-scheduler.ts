import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort, type ManagedProcess, type ProcessGroup } from '@signet/testbed';
import { stringify } from 'yaml';
import type { ClusterPki } from './pki.js';

export interface SchedulerOptions {
  readonly group: ProcessGroup;
  readonly binary: string;
  readonly env: NodeJS.ProcessEnv;
  readonly pki: ClusterPki;
  readonly kubeconfig: string;
  readonly readyTimeoutMs?: number;
}

/** kube-scheduler from a KubeSchedulerConfiguration (its `--kubeconfig` flag is deprecated). */
export async function startScheduler(options: SchedulerOptions): Promise<ManagedProcess> {
  const port = await freePort();
  const config = join(options.group.runDir, 'kube-scheduler.yaml');
  await writeFile(
    config,
    stringify({
      apiVersion: 'kubescheduler.config.k8s.io/v1',
      kind: 'KubeSchedulerConfiguration',
      clientConnection: { kubeconfig: options.kubeconfig },
      leaderElection: { leaderElect: false },
    }),
  );
  return options.group.start({
    name: 'kube-scheduler',
    command: options.binary,
    args: [
      `--config=${config}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--tls-cert-file=${options.pki.servingCertFile}`,
      `--tls-private-key-file=${options.pki.servingKeyFile}`,
    ],
    env: options.env,
    ready: { kind: 'http', url: `https://127.0.0.1:${port}/healthz`, ca: options.pki.caPem },
    readyTimeoutMs: options.readyTimeoutMs ?? 60_000,
  });
}
