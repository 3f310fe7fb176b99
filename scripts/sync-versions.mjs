// `pnpm version-packages` runs this after `changeset version`. changesets versions the libraries
// and the app as one fixed group, so they agree; the chart (apps/webhook/chart/Chart.yaml) takes
// the app's version as its `version` and `appVersion`, edited in place. Then every version is
// checked: exit 1, naming them, when any differs. No dependencies: it runs before anything is
// built.
//   node scripts/sync-versions.mjs [ROOT]   (default: this repository)
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? join(dirname(new URL(import.meta.url).pathname), '..'));
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
const app = readJson(join(root, 'apps/webhook/package.json'));

const chartFile = join(root, 'apps/webhook/chart/Chart.yaml');
const chart = readFileSync(chartFile, 'utf8');
const synced = chart
  .replace(/^version:.*$/m, `version: ${app.version}`)
  .replace(/^appVersion:.*$/m, `appVersion: "${app.version}"`);
if (synced !== chart) {
  writeFileSync(chartFile, synced);
  process.stdout.write(`apps/webhook/chart/Chart.yaml: version and appVersion ${app.version}\n`);
}

// Every public package under packages/ follows the app.
const disagreeing = [];
for (const name of readdirSync(join(root, 'packages'))) {
  let manifest;
  try {
    manifest = readJson(join(root, 'packages', name, 'package.json'));
  } catch {
    continue;
  }
  if (manifest.private !== true && manifest.version !== app.version) {
    disagreeing.push(`packages/${name} (${manifest.name}): ${manifest.version}`);
  }
}
if (disagreeing.length > 0) {
  process.stderr.write(
    `versions disagree with @signet/webhook ${app.version}:\n  ${disagreeing.join('\n  ')}\n`,
  );
  process.exit(1);
}
process.stdout.write(`every version is ${app.version}\n`);
