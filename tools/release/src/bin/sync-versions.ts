// `pnpm version-packages` runs this after `changeset version`: the chart takes the app's version,
// then every version is checked to agree (exit 1 naming the ones that do not).
import { disagreeingVersions, syncChartVersion } from '../versions.js';
import { repositoryRoot } from '../workspace.js';

const root = repositoryRoot();
const { from, to } = await syncChartVersion(root);
if (from.version !== to || from.appVersion !== to) {
  process.stdout.write(
    `Chart.yaml: version ${from.version} -> ${to}, appVersion ${from.appVersion} -> ${to}\n`,
  );
}
const disagreeing = await disagreeingVersions(root);
if (disagreeing.length > 0) {
  process.stderr.write(`versions disagree:\n  ${disagreeing.join('\n  ')}\n`);
  process.exit(1);
}
process.stdout.write(`every version is ${to}\n`);
