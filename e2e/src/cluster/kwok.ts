import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ManagedProcess, ProcessGroup } from '@signet/testbed';
import { kwokStagesYaml } from './kwok-stages.js';

export interface KwokOptions {
  readonly group: ProcessGroup;
  readonly binary: string;
  readonly env: NodeJS.ProcessEnv;
  readonly kubeconfig: string;
  /** Pod IPs are allocated from this range; it must not overlap the Service range. */
  readonly podCidr?: string;
}

/**
 * kwok as a plain process: it plays the kubelet of every Node (`--manage-all-nodes`), renews their
 * Leases and moves Pods through the stages of `kwok-stages.ts`. It serves nothing (no
 * `--server-address`, so no logs/exec endpoints), hence no readiness probe of its own: the cluster
 * is ready once its Nodes are.
 */
export async function startKwok(options: KwokOptions): Promise<ManagedProcess> {
  const home = join(options.group.runDir, 'kwok-home');
  await mkdir(home, { recursive: true });
  const stages = join(options.group.runDir, 'kwok-stages.yaml');
  await writeFile(stages, kwokStagesYaml());
  return options.group.start({
    name: 'kwok',
    command: options.binary,
    args: [
      `--kubeconfig=${options.kubeconfig}`,
      `--config=${stages}`,
      '--manage-all-nodes=true',
      '--node-lease-duration-seconds=40',
      `--cidr=${options.podCidr ?? '10.244.0.0/16'}`,
    ],
    // kwok also reads ~/.kwok/kwok.yaml when it exists: a private HOME keeps the user's out.
    env: { ...options.env, HOME: home },
  });
}
