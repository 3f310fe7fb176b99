// Fails when the README's layout or dependency diagram no longer tells the truth: every workspace
// package must have a row in `## Layout` and appear in the diagram; every arrow drawn (`A <- B`:
// B depends on A) must be a dependency in B's package.json, and every dependency must be drawn or
// follow from arrows drawn. Part of `pnpm lint`.
//   node scripts/check-layout.mjs
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const manifests = execFileSync('git', ['ls-files', '*package.json'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((file) => file !== '' && file !== 'package.json' && !file.includes('/fixtures/'));
const packages = new Map();
for (const file of manifests) {
  const json = JSON.parse(readFileSync(resolve(root, file), 'utf8'));
  if (typeof json.name !== 'string' || !json.name.startsWith('@signet/')) continue;
  const dependencies = Object.keys(json.dependencies ?? {}).filter((name) => name.startsWith('@signet/'));
  packages.set(json.name, { dir: dirname(file), dependencies });
}

const readme = readFileSync(resolve(root, 'README.md'), 'utf8');
const section = readme.split(/^## Layout\s*$/m)[1]?.split(/^## /m)[0] ?? '';
const [layout = '', diagram = ''] = [...section.matchAll(/```\n([\s\S]*?)```/g)].map((m) => m[1]);
const problems = [];

for (const [name, { dir }] of packages) {
  if (!new RegExp(`^${dir}\\s+${name}\\s`, 'm').test(layout))
    problems.push(`Layout has no row "${dir}  ${name}  ..."`);
}

/** `e2e` and `@signet/x` are packages; `(tests)` and the like stand for no package. */
const node = (token) => (token === 'e2e' ? '@signet/e2e' : token.startsWith('@signet/') ? token : undefined);
const drawn = new Map();
for (const line of diagram.split('\n')) {
  // A parenthesised note (`(tests)`, `(the published packages)`) is one token that names no package.
  const tokens = line
    .trim()
    .replace(/\([^)]*\)/g, '(note)')
    .split(/\s+/)
    .filter(Boolean);
  for (let i = 1; i + 1 < tokens.length; i += 2) {
    const [left, arrow, right] = [node(tokens[i - 1]), tokens[i], node(tokens[i + 1])];
    if (left === undefined || right === undefined || (arrow !== '<-' && arrow !== '->')) continue;
    const [from, to] = arrow === '<-' ? [right, left] : [left, right];
    if (!drawn.has(from)) drawn.set(from, new Set());
    drawn.get(from).add(to);
  }
}
const seen = new Set(diagram.match(/@signet\/[\w-]+|\be2e\b/g)?.map(node) ?? []);
for (const name of packages.keys()) if (!seen.has(name)) problems.push(`the diagram does not show ${name}`);
for (const [from, targets] of drawn) {
  for (const to of targets) {
    if (!packages.get(from)?.dependencies.includes(to))
      problems.push(`the diagram draws ${to} <- ${from}, which is not a dependency`);
  }
}
const reaches = (from, to, visited = new Set()) =>
  [...(drawn.get(from) ?? [])].some(
    (next) => next === to || (!visited.has(next) && visited.add(next) && reaches(next, to, visited)),
  );
for (const [name, { dependencies }] of packages) {
  for (const dependency of dependencies) {
    if (!reaches(name, dependency))
      problems.push(`the diagram does not show that ${name} depends on ${dependency}`);
  }
}

if (problems.length > 0) {
  console.error(`README layout:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`layout: ${packages.size} packages in the README's layout and dependency diagram`);
