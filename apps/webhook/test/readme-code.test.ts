// The README's lines about the code, held against the code: the files and folders it names exist,
// its layout table lists every entry of src/ and only those, its exports table is src/index.ts's,
// and its list of the parts of `signet serve` is what a running Signet starts, in that order.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority } from '../src/certificates.js';
import { startTarget } from './attack/server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The lines under `heading`, up to the next heading. */
function section(heading: string): string[] {
  const lines = README.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`the README has no "${heading}"`);
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** The backticked words of a table's first column, per row (the header and rule left out). */
function firstColumn(lines: readonly string[]): string[][] {
  return lines
    .filter((line) => line.startsWith('| `'))
    .map((line) => [...(line.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string));
}

/** What src/index.ts exports, by name (values and types alike). */
function indexExports(): string[] {
  const text = readFileSync(join(ROOT, 'src/index.ts'), 'utf8');
  return [...text.matchAll(/^export (?:type )?\{([^}]*)\}/gm)].flatMap((m) =>
    (m[1] as string)
      .split(',')
      .map((name) => name.trim().replace(/^type /, ''))
      .filter((name) => name !== ''),
  );
}

/** Per numbered item of the parts list: the part names it gives (one, or alternatives). */
function listedParts(): string[][] {
  return section('### The parts of `signet serve`')
    .join('\n')
    .split(/\n(?=\d+\. )/)
    .filter((item) => /^\d+\. /.test(item))
    .map((item) => {
      const head = item.split(': ')[0] as string;
      return [...head.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string).filter((n) => !n.startsWith('-'));
    });
}

/** Paths the README names in links and in backticks, relative to this package. */
function namedPaths(): string[] {
  const links = [...README.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
    .map((m) => m[1] as string)
    .filter((target) => !/^[a-z]+:/.test(target));
  const ticked = [...README.matchAll(/`((?:src|test|bench|soak|scripts|chart)\/[\w./-]*)`/g)].map(
    (m) => m[1] as string,
  );
  return [...new Set([...links, ...ticked])];
}

let dir = '';
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the README's lines about the code", () => {
  it('name files and folders that exist', () => {
    const paths = namedPaths();
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });

  it('list every entry of src/ in the layout table, and only those', () => {
    const listed = firstColumn(section('## Layout')).flat().sort();
    const entries = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
      .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
      .sort();
    expect(listed).toEqual(entries);
  });

  it("list src/index.ts's exports in the exports table, and only those", () => {
    expect(firstColumn(section('### Exports')).flat().sort()).toEqual(indexExports().sort());
  });

  it('list the parts a running Signet starts, in the order it starts them', async () => {
    dir = await mkdtemp(join(tmpdir(), 'signet-readme-'));
    const clientCa = join(dir, 'client-ca.crt');
    await writeFile(clientCa, (await createCertificateAuthority('readme-client-ca', 1)).cert);
    const target = await startTarget(dir, { 'client-ca-file': clientCa });
    const started = target.signet.parts;
    await target.signet.stop(0);
    const items = listedParts();
    expect(items).toHaveLength(12);
    // Policy files and a client CA: each part started is one item's, in the items' order.
    const positions = started.map((name) => items.findIndex((names) => names.includes(name)));
    expect(positions).toEqual([0, 1, 2, 4, 5, 6, 11]);
    // What only a cluster starts is named so by its class.
    const source = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => readFileSync(join(ROOT, 'src', file), 'utf8'))
      .join('\n');
    const unseen = items.flat().filter((name) => !started.includes(name));
    expect(unseen).toEqual([
      'self-managed TLS',
      'verification records',
      'policy watches',
      'policy status',
      'namespaced policy status',
      'background audit',
      'verification record collection',
    ]);
    expect(unseen.filter((name) => !source.includes(`readonly name = '${name}';`))).toEqual([]);
  });
});
