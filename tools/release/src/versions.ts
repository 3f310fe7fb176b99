// Signet's one version. changesets versions the libraries and the app as one fixed group
// (.changeset/config.json), so every public package and @signet/webhook carry the same version;
// everything else is derived from @signet/webhook's: the chart's `version` and `appVersion`
// (written by scripts/sync-versions.mjs after `changeset version`), the image's
// `org.opencontainers.image.version` label (apps/webhook/image/build-offline.sh) and
// `signet --version` (read from the package at run time).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { readManifest, workspacePackages } from './workspace.js';

export const APP_PACKAGE = '@signet/webhook';
export const CHART_DIR = 'apps/webhook/chart';

export interface ChartVersions {
  readonly version: string;
  readonly appVersion: string;
}

export interface ChangesetsConfig {
  readonly fixed: readonly (readonly string[])[];
  readonly ignore: readonly string[];
  readonly privatePackages: { readonly version: boolean; readonly tag: boolean };
}

export async function readChartVersions(root: string): Promise<ChartVersions> {
  const chart = parse(await readFile(join(root, CHART_DIR, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
  return { version: String(chart.version), appVersion: String(chart.appVersion) };
}

export async function readChangesetsConfig(root: string): Promise<ChangesetsConfig> {
  return JSON.parse(await readFile(join(root, '.changeset', 'config.json'), 'utf8')) as ChangesetsConfig;
}

/** The app's version: the one every other version is checked against or derived from. */
export async function appVersion(root: string): Promise<string> {
  return (await readManifest(join(root, 'apps', 'webhook'))).version;
}

/** Each version that must agree, by where it lives. */
export async function versionSources(root: string): Promise<Record<string, string>> {
  const sources: Record<string, string> = {};
  for (const pkg of await workspacePackages(root)) {
    if (pkg.manifest.private !== true || pkg.manifest.name === APP_PACKAGE) {
      sources[`${pkg.path}/package.json (${pkg.manifest.name})`] = pkg.manifest.version;
    }
  }
  const chart = await readChartVersions(root);
  sources[`${CHART_DIR}/Chart.yaml version`] = chart.version;
  sources[`${CHART_DIR}/Chart.yaml appVersion`] = chart.appVersion;
  return sources;
}

/** Sources whose version differs from the app's: empty when every version agrees. */
export async function disagreeingVersions(root: string): Promise<string[]> {
  const expected = await appVersion(root);
  return Object.entries(await versionSources(root))
    .filter(([, version]) => version !== expected)
    .map(([where, version]) => `${where}: ${version} (the app is ${expected})`);
}
