// Fails when a Markdown link of the repository points at a file that does not exist, or leaves the
// repository (a clone has nothing outside it). Part of `pnpm lint`.
//   node scripts/check-links.mjs [FILE.md...]   (default: every tracked Markdown file)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const files =
  process.argv.length > 2
    ? process.argv.slice(2)
    : execFileSync('git', ['ls-files', '*.md'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);

const problems = [];
for (const file of files) {
  const path = resolve(root, file);
  const text = readFileSync(path, 'utf8').replace(/```[\s\S]*?```/g, (block) => block.replace(/[^\n]/g, ' '));
  const targets = [
    ...[...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => [m[1], m.index]),
    ...[...text.matchAll(/^\[[^\]]+\]:\s*(\S+)/gm)].map((m) => [m[1], m.index]),
  ];
  for (const [target, index] of targets) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    const line = text.slice(0, index).split('\n').length;
    const where = `${relative(root, path)}:${line}`;
    const file = decodeURIComponent(target.split('#')[0]);
    const resolved = resolve(dirname(path), file);
    if (resolved !== root && !resolved.startsWith(root + sep))
      problems.push(`${where}: ${target} leaves the repository`);
    else if (!existsSync(resolved)) problems.push(`${where}: ${target} does not exist`);
  }
}
// Code and configuration may cite documents too: none may point outside the repository.
if (process.argv.length <= 2) {
  const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n');
  for (const file of tracked.filter((f) => /\.(ts|mjs|js|ya?ml|json|sh)$|(^|\/)run$/.test(f))) {
    if (file === 'scripts/check-links.mjs' || !existsSync(resolve(root, file))) continue;
    const lines = readFileSync(resolve(root, file), 'utf8').split('\n');
    lines.forEach((text, i) => {
      if (/\.\.\/shared\/|shared\/design\//.test(text))
        problems.push(`${file}:${i + 1}: cites a document outside the repository`);
    });
  }
}
if (problems.length > 0) {
  console.error(`broken links:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`links: ${files.length} Markdown files checked`);
