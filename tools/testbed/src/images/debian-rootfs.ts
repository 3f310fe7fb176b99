// Root filesystems from Debian's packages with mmdebstrap, using the machine's own apt sources
// (the only package mirror these machines reach), so no image is ever pulled from a registry.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TestbedError } from '../errors.js';
import { runCommand } from '../exec.js';

export interface RootfsOptions {
  /**
   * `minbase`: an installed system (maintainer scripts run; what a node needs). `extract`: the
   * packages' files and their dependencies only, nothing run: a distroless-style base.
   */
  readonly variant: 'minbase' | 'extract';
  readonly packages: readonly string[];
  /** A `.tar` file, or a directory (then the caller may change files before packing it). */
  readonly output: string;
  readonly timeoutMs?: number;
}

/** The suite of the machine (`bookworm`), from /etc/os-release: its sources serve that one. */
export function hostSuite(osRelease = '/etc/os-release'): string {
  const text = existsSync(osRelease) ? readFileSync(osRelease, 'utf8') : '';
  const codename = /^VERSION_CODENAME=(.+)$/m.exec(text)?.[1]?.replace(/"/g, '').trim();
  if (!codename)
    throw new TestbedError('COMMAND_FAILED', `no VERSION_CODENAME in ${osRelease}: not a Debian machine?`);
  return codename;
}

/** The machine's apt sources files (`*.sources` in deb822 form and `sources.list`), as mmdebstrap mirrors. */
export function hostAptSources(aptDir = '/etc/apt'): string[] {
  const files: string[] = [];
  const list = join(aptDir, 'sources.list');
  if (existsSync(list) && statSync(list).size > 0 && /^\s*deb\s/m.test(readFileSync(list, 'utf8')))
    files.push(list);
  const parts = join(aptDir, 'sources.list.d');
  if (existsSync(parts)) {
    for (const file of readdirSync(parts).sort()) {
      if (file.endsWith('.sources') || file.endsWith('.list')) files.push(join(parts, file));
    }
  }
  if (files.length === 0) throw new TestbedError('COMMAND_FAILED', `no apt sources under ${aptDir}`);
  return files;
}

/** Docs, manuals and translations are left out: nobody reads them in a test image. */
const DPKG_EXCLUDES = ['/usr/share/doc/*', '/usr/share/man/*', '/usr/share/locale/*', '/usr/share/info/*'];

/** Runs mmdebstrap (Debian's `mmdebstrap` package) for the machine's suite and sources. */
export async function buildDebianRootfs(options: RootfsOptions): Promise<void> {
  const args = [
    `--variant=${options.variant}`,
    `--include=${options.packages.join(',')}`,
    ...DPKG_EXCLUDES.map((pattern) => `--dpkgopt=path-exclude=${pattern}`),
    '--quiet',
    hostSuite(),
    options.output,
    ...hostAptSources(),
  ];
  try {
    await runCommand('mmdebstrap', args, { timeoutMs: options.timeoutMs ?? 900_000 });
  } catch (error) {
    const missing = (error as Error).message.includes('could not run mmdebstrap');
    throw new TestbedError(
      'COMMAND_FAILED',
      missing
        ? 'mmdebstrap is not installed (apt-get install -y mmdebstrap): the images are built from Debian packages'
        : `mmdebstrap failed: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
