// The pending changesets (`.changeset/*.md`), which become the release notes, and the code names
// they mention. A note that names a type or function no package exports any more (renamed, made
// internal, moved to another package) is false on release day.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface Changeset {
  /** `narrow-public-apis.md` */
  readonly file: string;
  /** Package name to bump type, from the front matter. */
  readonly releases: Readonly<Record<string, string>>;
  /** The note, without its front matter. */
  readonly text: string;
}

export async function pendingChangesets(root: string): Promise<Changeset[]> {
  const dir = join(root, '.changeset');
  const files = (await readdir(dir)).filter((f) => f.endsWith('.md') && f !== 'README.md').sort();
  const changesets: Changeset[] = [];
  for (const file of files) {
    const source = await readFile(join(dir, file), 'utf8');
    const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(source);
    if (match === null) throw new Error(`${file} has no front matter`);
    const releases: Record<string, string> = {};
    for (const line of (match[1] ?? '').split('\n')) {
      const entry = /^"([^"]+)":\s*(\w+)$/.exec(line.trim());
      if (entry?.[1] !== undefined && entry[2] !== undefined) releases[entry[1]] = entry[2];
    }
    changesets.push({ file, releases, text: match[2] ?? '' });
  }
  return changesets;
}

/**
 * The exported-looking names a note puts in code spans: a type or class (`PolicyEngineHost`, two
 * capitals or more, also as `KmsKeyStore.lookup`) or a function called (`matchPolicies(...)`).
 * Field and option names (`cacheDir`, `privateHosts`) and error codes are not names of exports.
 */
export function apiNamesIn(text: string): string[] {
  const names = new Set<string>();
  for (const [, span = ''] of text.matchAll(/`([^`]+)`/g)) {
    const lead = /^([A-Za-z_$][\w$]*)(\(|\.)?/.exec(span.replace(/\s+/g, ' '));
    const name = lead?.[1];
    if (name === undefined) continue;
    const typeName = /^[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+$/.test(name);
    const called = lead?.[2] === '(' && /^[a-z][a-z0-9]*[A-Z]/.test(name);
    if (typeName || called) names.add(name);
  }
  return [...names];
}
