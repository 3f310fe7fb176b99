// For the package README tests: what a package's `src/index.ts` exports, and what its README's
// API table lists, so that a test can hold one against the other. A table row is
// `| Area | `Name`, `Name`, ... | what for |`: every backticked name in the second column is an
// export, and every export is in exactly one row.

/** Every name `index` exports (values and types), sorted. Only `export {...} from` forms. */
export function exportedNames(index: string): string[] {
  const names: string[] = [];
  for (const match of index.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"][^'"]+['"]/g)) {
    for (const specifier of (match[1] ?? '').split(',')) {
      const name = specifier
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .at(-1);
      if (name) names.push(name);
    }
  }
  return names.sort();
}

/** The backticked names in the second column of the table under `## API`, in table order. */
export function apiTableNames(readme: string): string[] {
  const section = readme.split(/^## API\s*$/m)[1]?.split(/^## /m)[0] ?? '';
  const rows = section.split('\n').filter((line) => line.startsWith('|'));
  return rows
    .slice(2)
    .flatMap((row) =>
      [...(row.split('|')[2] ?? '').matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1] ?? ''),
    );
}
