// The names a built package exports from its root (values and types), read from its declaration
// files as tsc writes them: `export { a, type B, c as d } from`, `export * from`, `export type *
// from` (followed into the file they name) and `export declare function|const|class ...`.
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

const RE_EXPORT = /export\s+(?:type\s+)?(?:\*(?:\s+as\s+(\w+))?|\{([^}]*)\})\s*(?:from\s+['"]([^'"]+)['"])?/g;
const DECLARED =
  /export\s+(?:declare\s+)?(?:abstract\s+)?(?:function|const|let|var|class|enum|interface|type|namespace)\s+([A-Za-z_$][\w$]*)/g;

/** Every name `<dir>`'s `types` entry (`dist/index.d.ts`) exports. */
export async function exportedNames(packageDir: string): Promise<Set<string>> {
  const manifest = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as { types?: string };
  const names = new Set<string>();
  await collect(resolve(packageDir, manifest.types ?? 'dist/index.d.ts'), names, new Set());
  return names;
}

async function collect(file: string, names: Set<string>, seen: Set<string>): Promise<void> {
  if (seen.has(file)) return;
  seen.add(file);
  const text = (await readFile(file, 'utf8')).replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
  for (const [, namespace, list, from] of text.matchAll(RE_EXPORT)) {
    if (namespace !== undefined) names.add(namespace);
    else if (list !== undefined) {
      for (const entry of list.split(',')) {
        const name = entry
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)
          .pop();
        if (name) names.add(name);
      }
    } else if (from !== undefined) {
      await collect(join(dirname(file), from.replace(/\.js$/, '.d.ts')), names, seen);
    }
  }
  for (const [, name] of text.matchAll(DECLARED)) if (name !== undefined) names.add(name);
}
