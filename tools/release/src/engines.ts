// Which Node.js versions a package's `engines.node` accepts, for the ranges Signet's packages
// write: alternatives joined by `||`, each `^X.Y.Z`, `>=X.Y.Z` or an exact `X.Y.Z`.

type Version = readonly [number, number, number];

function parseVersion(text: string): Version {
  const parts = text.trim().replace(/^v/, '').split('.').map(Number);
  const [major = Number.NaN, minor = 0, patch = 0] = parts;
  if (![major, minor, patch].every(Number.isInteger)) throw new Error(`not a version: ${text}`);
  return [major, minor, patch];
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Whether `version` (`22.23.5`) satisfies `range` (`^20.19.0 || >=22.12.0`). */
export function satisfiesEngines(version: string, range: string): boolean {
  const v = parseVersion(version);
  return range.split('||').some((alternative) => {
    const term = alternative.trim();
    if (term.startsWith('>=')) return compare(v, parseVersion(term.slice(2))) >= 0;
    if (term.startsWith('^')) {
      const low = parseVersion(term.slice(1));
      return v[0] === low[0] && compare(v, low) >= 0;
    }
    if (/^\d/.test(term)) return compare(v, parseVersion(term)) === 0;
    throw new Error(`engines range term not understood: ${term}`);
  });
}
