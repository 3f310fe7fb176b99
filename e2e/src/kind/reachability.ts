// Who can open a connection to a Pod's port, asked the two ways that matter for a webhook: from
// another Pod (busybox `nc` inside it, a plain TCP connect) and from the API server itself (its
// pod proxy dials the Pod from the API server's own network, as its webhook calls do). Every
// attempt opens a new connection: NetworkPolicy decides at connect time, and connections already
// open survive a policy change.
import type { TestCluster } from '../providers/test-cluster.js';

/** What happened to one connection attempt; `unclear` keeps the output for the assertion message. */
export type Reach = 'connected' | 'refused' | 'timed out' | 'unclear';

export interface ReachResult {
  readonly reach: Reach;
  /** What was printed, for messages. */
  readonly output: string;
}

export interface PodRef {
  readonly namespace: string;
  readonly name: string;
}

/** Seconds a connect may take before it counts as dropped. */
const CONNECT_TIMEOUT_SECONDS = 3;

/**
 * Connects from inside `from` (an image with Debian's static busybox) to `host:port`, sends a
 * line and waits for the server to hang up. A TLS server closes the connection on a line that is
 * not a ClientHello, so `nc` ends by itself once connected; the marker line tells that apart from
 * a refused or dropped connect, which busybox reports on stderr.
 */
export async function reachFromPod(
  cluster: TestCluster,
  from: PodRef,
  host: string,
  port: number,
): Promise<ReachResult> {
  const script = [
    `echo hello | busybox timeout 10 busybox nc -w ${CONNECT_TIMEOUT_SECONDS} ${host} ${port}`,
    'echo "nc exit $?"',
  ].join('; ');
  const result = await cluster.kubectl(['exec', '-n', from.namespace, from.name, '--', 'sh', '-c', script], {
    timeoutMs: 30_000,
  });
  const output = `${result.stdout}${result.stderr}`.trim();
  if (/refused/i.test(output)) return { reach: 'refused', output };
  if (/timed out|timeout/i.test(output) || /nc exit 143/.test(output)) return { reach: 'timed out', output };
  if (result.exitCode === 0 && /nc exit 0/.test(output)) return { reach: 'connected', output };
  return { reach: 'unclear', output };
}

/**
 * Asks the API server to GET `https://<pod>:<port>/` through its pod proxy. `answered` matches
 * the server's own reply (Signet's admission port answers a GET with 404 `no such endpoint`), which
 * kubectl prints only at `-v=8`: without it, any 404 reads `the server could not find the requested
 * resource`. A dial that fails is the API server's own error (`error trying to reach service`).
 */
export async function reachFromApiServer(
  cluster: TestCluster,
  pod: PodRef,
  port: number,
  answered: RegExp,
): Promise<ReachResult> {
  const path = `/api/v1/namespaces/${pod.namespace}/pods/https:${pod.name}:${port}/proxy/`;
  const result = await cluster.kubectl(['get', '--raw', path, '--request-timeout=20s', '-v=8'], {
    timeoutMs: 30_000,
  });
  const printed = `${result.stdout}${result.stderr}`;
  // The verbose lines are kept out of messages, but for the response body and the error.
  const output = printed
    .split('\n')
    .filter((line) => /Response Body|Error from server|error trying to reach/.test(line))
    .join('\n')
    .trim();
  if (answered.test(printed)) return { reach: 'connected', output };
  if (/error trying to reach service[^\n]*connection refused/i.test(printed))
    return { reach: 'refused', output };
  if (/error trying to reach service[^\n]*(i\/o timeout|timed out|deadline)/i.test(printed))
    return { reach: 'timed out', output };
  return { reach: 'unclear', output: output || printed.slice(-2000) };
}

/** `connected`, or that the attempt did not get through. */
export const blocked = (result: ReachResult): boolean =>
  result.reach === 'refused' || result.reach === 'timed out';
