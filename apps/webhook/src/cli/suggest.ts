// "Did you mean": the closest known word to a mistyped flag, command or action.

/**
 * Edit distance with adjacent transpositions counted as one edit (optimal string alignment), so
 * `--plicy` and `--polciy` are both one step from `--policy`.
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => d[i]?.[j] as number;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidate `word` most likely stands for: the only one it is a prefix of (`--insecure` for
 * `--insecure-registry`), else the nearest within a third of its length (at least one edit), or
 * `undefined` when nothing is close.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const known = [...new Set(candidates)];
  const lower = word.toLowerCase();
  if (lower.length >= 3) {
    const extended = known.filter((c) => c.toLowerCase().startsWith(lower));
    if (extended.length === 1) return extended[0];
  }
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** ` (did you mean X?)`, or nothing. */
export function didYouMean(word: string, candidates: Iterable<string>, render = (s: string) => s): string {
  const match = closest(word, candidates);
  return match === undefined ? '' : ` (did you mean ${render(match)}?)`;
}
