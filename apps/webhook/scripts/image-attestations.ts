// What build-offline.sh attaches to Signet's image besides the image itself, made from the build's
// real inputs (run by the script with the pinned Node; it passes the facts only it knows):
//   node apps/webhook/scripts/image-attestations.ts --context DIR --debs DIR --out DIR --repo DIR
//        --image-id sha256:... --tag TAG --started ISO --builder-versions JSON
// - checks the SBOM pnpm wrote (OUT/sbom.cdx.json, CycloneDX, `pnpm sbom` over the app's
//   production closure) against the app the image carries: every package installed in
//   CONTEXT/app (its node_modules/.pnpm/lock.yaml) is a component at that version, and nothing
//   else is;
// - writes OUT/provenance.json, the predicate of a SLSA v1 provenance statement
//   (https://slsa.dev/provenance/v1): the source commit, the Node binary, every Debian package of
//   the base (its .deb's SHA-256), the lockfile and the Dockerfile, with the image config and the
//   SBOM as byproducts. `cosign attest --type slsaprovenance1` wraps it in the in-toto statement
//   whose subject is the image's digest in its registry.
import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';

const SOURCE = 'https://github.com/signet-dev/signet';
const BUILD_TYPE = `${SOURCE}/blob/main/docs/releasing.md#what-the-image-build-makes`;

const { values } = parseArgs({
  options: {
    context: { type: 'string' },
    debs: { type: 'string' },
    out: { type: 'string' },
    repo: { type: 'string' },
    'image-id': { type: 'string' },
    tag: { type: 'string' },
    started: { type: 'string' },
    'builder-versions': { type: 'string' },
  },
});
const need = (name: keyof typeof values): string => {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new Error(`image-attestations: --${name} is required`);
  return value;
};
const context = need('context');
const out = need('out');
const repo = need('repo');

const sha256 = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();

interface Component {
  readonly purl?: string;
  readonly name: string;
  readonly group?: string;
  readonly version: string;
}
interface Bom {
  readonly metadata: { readonly component: Component };
  readonly components: readonly Component[];
}

const npmName = (c: Component) => (c.group ? `${c.group}/${c.name}` : c.name);

/** Packages installed in the deployed app, as `name@version` (workspace libraries at their version). */
async function deployedPackages(): Promise<Set<string>> {
  const lock = parse(await readFile(join(context, 'app/node_modules/.pnpm/lock.yaml'), 'utf8')) as {
    packages?: Record<string, unknown>;
  };
  const installed = new Set<string>();
  for (const key of Object.keys(lock.packages ?? {})) {
    const at = key.indexOf('@', 1);
    const name = key.slice(0, at);
    const version = key.slice(at + 1).replace(/\(.*$/, '');
    if (version.startsWith('file:')) {
      const manifest = JSON.parse(await readFile(join(repo, version.slice(5), 'package.json'), 'utf8'));
      installed.add(`${manifest.name}@${manifest.version}`);
    } else {
      installed.add(`${name}@${version}`);
    }
  }
  return installed;
}

async function checkSbom(): Promise<Bom> {
  const bom = JSON.parse(await readFile(join(out, 'sbom.cdx.json'), 'utf8')) as Bom;
  const listed = new Set(bom.components.map((c) => `${npmName(c)}@${c.version}`));
  const installed = await deployedPackages();
  const missing = [...installed].filter((p) => !listed.has(p));
  const extra = [...listed].filter((p) => !installed.has(p));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(
      `image-attestations: the SBOM does not describe the deployed app: missing ${missing.join(', ') || 'none'}; not installed ${extra.join(', ') || 'none'}`,
    );
  }
  return bom;
}

/** The Debian packages of the base, from the .deb files mmdebstrap downloaded. */
async function debianPackages(): Promise<object[]> {
  const dir = need('debs');
  const debs = (await readdir(dir)).filter((name) => name.endsWith('.deb')).sort();
  if (debs.length === 0) throw new Error(`image-attestations: no .deb files in ${dir}`);
  const suite = execFileSync('sh', ['-c', '. /etc/os-release && echo "$ID $VERSION_CODENAME"'], {
    encoding: 'utf8',
  })
    .trim()
    .split(' ');
  return Promise.all(
    debs.map(async (deb) => {
      const path = join(dir, deb);
      const [name, version, arch] = execFileSync(
        'dpkg-deb',
        ['-f', path, 'Package', 'Version', 'Architecture'],
        {
          encoding: 'utf8',
        },
      )
        .trim()
        .split('\n')
        .map((line) => line.slice(line.indexOf(':') + 1).trim());
      return {
        name: deb,
        uri: `pkg:deb/${suite[0]}/${name}@${encodeURIComponent(version ?? '')}?arch=${arch}&distro=${suite[1]}`,
        digest: { sha256: await sha256(path) },
      };
    }),
  );
}

const bom = await checkSbom();
const commit = git('rev-parse', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
const nodeVersion = execFileSync(join(context, 'node'), ['--version'], { encoding: 'utf8' }).trim().slice(1);
const predicate = {
  buildDefinition: {
    buildType: BUILD_TYPE,
    externalParameters: {
      source: { uri: `git+${SOURCE}`, digest: { gitCommit: commit } },
      dockerfile: 'apps/webhook/image/Dockerfile.offline',
      tag: need('tag'),
      version: bom.metadata.component.version,
    },
    internalParameters: {
      builder: 'apps/webhook/image/build-offline.sh',
      // A build from a working tree with uncommitted changes is not the commit above.
      workingTreeClean: !dirty,
      tools: JSON.parse(need('builder-versions')) as unknown,
    },
    resolvedDependencies: [
      { uri: `git+${SOURCE}@${commit}`, digest: { gitCommit: commit } },
      {
        name: 'node',
        uri: `pkg:npm/node-${process.platform}-${process.arch}@${nodeVersion}`,
        digest: { sha256: await sha256(join(context, 'node')) },
      },
      ...(await debianPackages()),
      { name: 'pnpm-lock.yaml', digest: { sha256: await sha256(join(repo, 'pnpm-lock.yaml')) } },
      {
        name: 'apps/webhook/image/Dockerfile.offline',
        digest: { sha256: await sha256(join(repo, 'apps/webhook/image/Dockerfile.offline')) },
      },
    ],
  },
  runDetails: {
    builder: { id: `${SOURCE}/blob/${commit}/apps/webhook/image/build-offline.sh` },
    metadata: {
      invocationId: randomUUID(),
      startedOn: need('started'),
      finishedOn: new Date().toISOString(),
    },
    byproducts: [
      { name: 'image config', digest: { sha256: need('image-id').replace(/^sha256:/, '') } },
      { name: 'sbom.cdx.json', digest: { sha256: await sha256(join(out, 'sbom.cdx.json')) } },
    ],
  },
};
await writeFile(join(out, 'provenance.json'), `${JSON.stringify(predicate, null, 2)}\n`);
process.stdout.write(
  `image-attestations: SBOM checked against the app (${bom.components.length} components), provenance.json written (${predicate.buildDefinition.resolvedDependencies.length} inputs)\n`,
);
