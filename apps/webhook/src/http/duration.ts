const UNITS: Readonly<Record<string, number>> = {
  h: 3_600_000,
  m: 60_000,
  s: 1000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 0.000001,
};

/**
 * Parses a Go duration as the API server writes it in `?timeout=` (`10s`, `1m0s`, `500ms`) into
 * milliseconds; `undefined` when it is not one.
 */
export function parseGoDuration(text: string): number | undefined {
  if (text === '' || text.length > 64) return undefined;
  const part = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/y;
  let total = 0;
  let index = 0;
  while (index < text.length) {
    part.lastIndex = index;
    const match = part.exec(text);
    if (match === null) return undefined;
    total += Number(match[1]) * (UNITS[match[2] as string] as number);
    index = part.lastIndex;
  }
  return total;
}
