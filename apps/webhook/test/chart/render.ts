// Renders apps/webhook/chart with the real helm, Helm 3 and Helm 4 (both built from the Go module
// proxy by the testbed), so every chart test runs against both majors.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureTools, runCommand } from '@signet/testbed';
import { parseAllDocuments } from 'yaml';

export const CHART_DIR = fileURLToPath(new URL('../../chart/', import.meta.url));
export const RELEASE = 'signet';
export const NAMESPACE = 'signet-system';

/** The helm binaries by major version. */
export type HelmMajor = 'helm3' | 'helm4';
export const HELM_MAJORS: readonly HelmMajor[] = ['helm3', 'helm4'];

export interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  readonly [field: string]: unknown;
}

let binaries: Promise<Record<HelmMajor, string>> | undefined;

/** Both helm binaries, built on first use (cached by version in ~/.cache/signet). */
export function helmBinaries(): Promise<Record<HelmMajor, string>> {
  binaries ??= ensureTools(['helm', 'helm4'], {
    onProgress: (event) => console.log(`testbed: ${event.message}`),
  }).then(({ helm, helm4 }) => ({ helm3: helm, helm4 }));
  return binaries;
}

/** What a helm command printed, or how it failed (exit code and stderr). */
export interface HelmRun {
  readonly ok: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `helm <args>` (with `values` written to a file and passed by `-f`) in a scratch HOME. */
export async function runHelm(major: HelmMajor, args: readonly string[], values: object = {}): Promise<HelmRun> {
  const helm = (await helmBinaries())[major];
  const home = await mkdtemp(join(tmpdir(), 'signet-helm-'));
  try {
    const file = join(home, 'values.yaml');
    // JSON (valid YAML): every string stays a string, where YAML 1.1 would read `yes` as true.
    await writeFile(file, JSON.stringify(values));
    const result = await runCommand(helm, [...args, '-f', file], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
      timeoutMs: 60_000,
    }).then(
      ({ stdout, stderr }) => ({ ok: true, stdout, stderr }),
      (error: unknown) => {
        const failed = error as { stdout?: string; stderr?: string; message?: string };
        return { ok: false, stdout: failed.stdout ?? '', stderr: failed.stderr ?? failed.message ?? String(error) };
      },
    );
    return result;
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** `helm template` of the chart with `values`; throws with helm's message when it refuses. */
export async function renderChart(major: HelmMajor, values: object = {}): Promise<K8sObject[]> {
  const run = await runHelm(major, ['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE], values);
  if (!run.ok) throw new Error(run.stderr);
  return parseAllDocuments(run.stdout)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
}

/** The error helm prints when it refuses to render with `values`, or '' when it renders. */
export async function renderError(major: HelmMajor, values: object): Promise<string> {
  const run = await runHelm(major, ['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE], values);
  return run.ok ? '' : run.stderr;
}

/** The one object of `kind` (and `name`, when given). */
export function only<T = K8sObject>(objects: readonly K8sObject[], kind: string, name?: string): T {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0] as T;
}
