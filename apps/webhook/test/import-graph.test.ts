// The shape of the package's own imports: no file reaches itself through imports (type-only and
// dynamic ones included: a circle of types still ties the files together for a reader and for
// the compiler), and the lower layers never import the CLI. Imports are read from the source text,
// which is all this needs: the specifiers are string literals, and the files are this package's.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

/** Every TypeScript source file under `dir`, as paths relative to `root` (src/ by default). */
function sourceFiles(dir: string, root = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path, root);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [relative(root, path)] : [];
  });
}

// `import ... from '...'`, `export ... from '...'` (over several lines), `import '...'` and
// `import('...')`: every form that ties one module to another.
const FROM = /^\s*(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"]+)['"]/gms;
const BARE = /^\s*import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The source text without comments that sit on their own lines (their examples are not imports). */
function code(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line))
    .join('\n');
}

/** The files of `root` (src/ by default) that `text` (the file `file`) imports. */
export function importsOf(file: string, text: string, root = SRC): string[] {
  const source = code(text);
  const specifiers = [FROM, BARE, DYNAMIC].flatMap((pattern) =>
    [...source.matchAll(pattern)].map((m) => m[1] as string),
  );
  return specifiers
    .filter((s) => s.startsWith('./') || s.startsWith('../'))
    .map((s) => relative(root, resolve(root, dirname(file), s)).replace(/\.js$/, '.ts'));
}

/** The import graph of a source directory (this package's src/ by default): file -> the files it imports. */
function importGraph(root = SRC): Map<string, string[]> {
  return new Map(
    sourceFiles(root, root).map((file) => [
      file,
      importsOf(file, readFileSync(join(root, file), 'utf8'), root),
    ]),
  );
}

/** Groups of files that import each other (strongly connected components of two or more, or a self-import). */
export function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative over the graph's few hundred edges.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) as number, index.get(target) as number));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

/** Imports that run against the layering: `[importer, imported]`. */
function upwardImports(graph: ReadonlyMap<string, readonly string[]>, from: RegExp, to: RegExp) {
  return [...graph].flatMap(([file, targets]) =>
    from.test(file) ? targets.filter((t) => to.test(t)).map((t) => [file, t]) : [],
  );
}

describe("the package's imports", () => {
  const graph = importGraph();

  it('are read: the composition root imports its parts, type-only and dynamic imports included', () => {
    // Sanity for the reader above: a static, a type-only and a lazily loaded import of signet.ts.
    expect(graph.get('signet.ts')).toEqual(
      expect.arrayContaining(['logger.ts', 'config.ts', 'kube/kube-api.ts']),
    );
    expect(graph.size).toBeGreaterThan(60);
  });

  it('form no circle', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('never run from the policy, admission or configuration modules up to the CLI', () => {
    const cli = /^(commands|cli)\//;
    expect(upwardImports(graph, /^(policy|admission)\//, cli)).toEqual([]);
    expect(upwardImports(graph, /^config\.ts$/, cli)).toEqual([]);
  });

  it('finds a circle and an upward import when there is one (the checks can fail)', () => {
    const sample = new Map([
      ['a.ts', importsOf('a.ts', "import type { B } from './b.js';\nexport const a = 1;")],
      ['b.ts', importsOf('b.ts', "export async function b() {\n  return import('./a.js');\n}")],
      ['policy/p.ts', importsOf('policy/p.ts', "import {\n  X,\n} from '../commands/c.js';")],
      ['commands/c.ts', []],
    ]);
    expect(circles(sample)).toEqual([['a.ts', 'b.ts']]);
    expect(upwardImports(sample, /^policy\//, /^commands\//)).toEqual([['policy/p.ts', 'commands/c.ts']]);
  });
});

// The same rule for every library of the workspace: the webhook is where it was first broken, but a
// circle in a library ties its files together for its readers just as much.
const PACKAGES = fileURLToPath(new URL('../../../packages', import.meta.url));
describe("every library's imports", () => {
  const libraries = readdirSync(PACKAGES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(PACKAGES, entry.name, 'src'))
    .filter((src) => existsSync(src));

  it('are read from every package under packages/', () => {
    expect(libraries.length).toBeGreaterThanOrEqual(8);
    const verifier = importGraph(join(PACKAGES, 'verifier', 'src'));
    expect(verifier.size).toBeGreaterThan(40);
    // The trust loaders and the keeper of remote roots share root-spec.ts; they imported each
    // other before it existed.
    expect(verifier.get('trust/tuf.ts')).toEqual(expect.arrayContaining(['trust/root-spec.ts']));
    expect(verifier.get('trust/remote-roots.ts')).toEqual(expect.arrayContaining(['trust/root-spec.ts']));
  });

  it.each(libraries.map((src) => [relative(PACKAGES, dirname(src)), src]))('%s: form no circle', (_, src) => {
    expect(circles(importGraph(src))).toEqual([]);
  });
});
