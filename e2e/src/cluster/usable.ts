import type { ManagedProcess } from '@signet/testbed';
import { fakeNodes } from './fake-nodes.js';
import type { Kubectl } from './kubectl.js';
import type { ProgressReporter } from './progress.js';
import { type Check, waitUntil } from './readiness.js';

export interface UsableOptions {
  readonly kubectl: Kubectl;
  /** Every component; all must keep running while the cluster settles. */
  readonly processes: readonly ManagedProcess[];
  readonly nodes: number;
  readonly progress: ProgressReporter;
  readonly timeoutMs: number;
}

/**
 * Registers the fake Nodes and waits until the cluster can run Pods: every Node Ready and
 * untainted (kwok reported it, node lifecycle lifted the not-ready taint), and the default
 * ServiceAccount exists (the ServiceAccount admission plugin refuses Pods without it).
 */
export async function waitUntilUsable(options: UsableOptions): Promise<void> {
  const { kubectl, processes, progress, timeoutMs } = options;
  await kubectl.apply(fakeNodes(options.nodes));
  progress.report('kwok', `registered ${options.nodes} fake Nodes`);
  const named = (...names: string[]) => processes.filter((process) => names.includes(process.name));
  await Promise.all([
    waitUntil(nodesSchedulable(kubectl, options.nodes), {
      component: 'kwok',
      what: `${options.nodes} Nodes Ready without taints`,
      timeoutMs,
      processes,
      suspects: named('kwok', 'kube-controller-manager'),
      progress,
    }),
    waitUntil(defaultServiceAccount(kubectl), {
      component: 'kube-controller-manager',
      what: 'ServiceAccount default/default',
      timeoutMs,
      processes,
      progress,
    }),
  ]);
}

interface NodeList {
  readonly items: readonly {
    readonly metadata: { readonly name: string };
    readonly spec?: { readonly taints?: readonly { readonly key: string; readonly effect: string }[] };
    readonly status?: { readonly conditions?: readonly { readonly type: string; readonly status: string }[] };
  }[];
}

function nodesSchedulable(kubectl: Kubectl, count: number): Check {
  return async () => {
    const nodes = await kubectl.getJson<NodeList>(['nodes']);
    const waiting = nodes.items.flatMap((node) => {
      const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      const taints = (node.spec?.taints ?? []).map((taint) => `${taint.key}:${taint.effect}`);
      if (!ready) return [`${node.metadata.name} not Ready`];
      return taints.length > 0 ? [`${node.metadata.name} tainted ${taints.join(',')}`] : [];
    });
    if (nodes.items.length < count) waiting.unshift(`${nodes.items.length}/${count} Nodes registered`);
    return waiting.length === 0 ? true : waiting.join('; ');
  };
}

function defaultServiceAccount(kubectl: Kubectl): Check {
  return async () => {
    const result = await kubectl.run(['get', 'serviceaccount', 'default', '--namespace', 'default']);
    return result.exitCode === 0 ? true : result.stderr.trim();
  };
}
