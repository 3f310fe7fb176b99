import { readFile } from 'node:fs/promises';

/**
 * One answered admission review, as `@signet/webhook`'s admission server logs it (a JSON line with
 * `msg: "admission"`). Signet and the naive fixture share that server, so scenarios read both
 * webhooks' decisions the same way.
 */
export interface AdmissionRecord {
  readonly time: string;
  readonly endpoint: string;
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly operation: string;
  readonly subResource: string | undefined;
  /** `request.userInfo.username`, e.g. `system:serviceaccount:kube-system:deployment-controller`. */
  readonly user: string | undefined;
  readonly dryRun: boolean;
  readonly decision: 'allowed' | 'denied' | 'warned' | string;
  readonly rule: string | undefined;
  readonly reason: string | undefined;
  /** The log line itself, for assertion messages and reports. */
  readonly line: string;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The admission records in a log (other lines, and lines that are not JSON, are skipped). */
export function parseAdmissionLog(log: string): AdmissionRecord[] {
  const records: AdmissionRecord[] = [];
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (entry.msg !== 'admission') continue;
    records.push({
      time: text(entry.time) ?? '',
      endpoint: text(entry.endpoint) ?? '',
      kind: text(entry.kind) ?? '',
      namespace: text(entry.namespace),
      name: text(entry.name),
      operation: text(entry.operation) ?? '',
      subResource: text(entry.subResource),
      user: text(entry.user),
      dryRun: entry.dryRun === true,
      decision: text(entry.decision) ?? '',
      rule: text(entry.rule),
      reason: text(entry.reason),
      line,
    });
  }
  return records;
}

/** `parseAdmissionLog` of a log file; a missing file has no records yet. */
export async function readAdmissionLog(path: string): Promise<AdmissionRecord[]> {
  return parseAdmissionLog(await readFile(path, 'utf8').catch(() => ''));
}

/**
 * The first record (after the first `skip`) that `matches`, waiting up to `timeoutMs` for it: a
 * webhook logs its decision just after answering, so it can land a moment after kubectl returned.
 */
export async function waitForAdmission(
  read: () => Promise<readonly AdmissionRecord[]>,
  matches: (record: AdmissionRecord) => boolean,
  options: { readonly skip?: number; readonly timeoutMs?: number } = {},
): Promise<AdmissionRecord | undefined> {
  const deadline = Date.now() + (options.timeoutMs ?? 5_000);
  for (;;) {
    const found = (await read()).slice(options.skip ?? 0).find(matches);
    if (found || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
