// Small kubectl steps the scenarios share.
import { readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { KubectlResult } from '../cluster/index.js';
import type { TestCluster } from '../providers/test-cluster.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Throws with kubectl's message unless it exited 0. */
export function must(result: KubectlResult): KubectlResult {
  if (result.exitCode !== 0)
    throw new Error(`kubectl failed: ${result.stderr.trim() || result.stdout.trim()}`);
  return result;
}

/** Polls `check` every 250 ms until it returns true; throws with its last answer after `timeoutMs`. */
export async function poll(
  what: string,
  timeoutMs: number,
  check: () => Promise<true | string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const result = await check();
    if (result === true) return;
    last = result;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${last}`);
    await sleep(250);
  }
}

/** Creates a namespace (with labels) and waits for its default ServiceAccount, which Pods need. */
export async function createNamespace(
  cluster: TestCluster,
  namespace: string,
  labels: Readonly<Record<string, string>> = {},
): Promise<void> {
  await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels } });
  // The ServiceAccount admission plugin refuses Pods until the namespace's default account exists.
  await poll(`ServiceAccount ${namespace}/default`, 30_000, async () => {
    const result = await cluster.kubectl(['get', 'serviceaccount', 'default', '--namespace', namespace]);
    return result.exitCode === 0 ? true : result.stderr.trim();
  });
}

/** `apps/webhook/chart`, found through the `@signet/webhook` package. */
export function signetChartDir(): string {
  const main = createRequire(import.meta.url).resolve('@signet/webhook');
  return join(dirname(main), '..', 'chart');
}

/**
 * Applies the chart's CRDs (`chart/files/crds/*.yaml`: ClusterImagePolicy, TrustRoot) and waits until
 * the API server serves them. Returns the CRD names.
 */
export async function installPolicyCrds(cluster: TestCluster): Promise<string[]> {
  const dir = join(signetChartDir(), 'files', 'crds');
  const files = (await readdir(dir)).filter((file) => /\.ya?ml$/.test(file)).sort();
  must(await cluster.kubectl(['apply', ...files.flatMap((file) => ['-f', join(dir, file)])]));
  const names = files.map((file) => file.replace(/\.ya?ml$/, ''));
  must(
    await cluster.kubectl(
      ['wait', '--for=condition=Established', '--timeout=60s', ...names.map((n) => `crd/${n}`)],
      { timeoutMs: 70_000 },
    ),
  );
  return names;
}

/** Whether kubectl's error output is an admission webhook's denial (not some other failure). */
export function deniedByWebhook(result: KubectlResult, webhookName = 'signet'): boolean {
  return (
    result.exitCode !== 0 &&
    new RegExp(`admission webhook "[a-z]+\\.${webhookName}\\.signet\\.dev" denied the request`).test(
      result.stderr,
    )
  );
}
