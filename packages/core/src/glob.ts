// Image globs with sigstore policy-controller's semantics: `*` matches within one path segment
// (never `/`, but across `:` and `@`), `**` matches anything, the glob must match the whole name,
// and a bare `*` / `*/*` means `index.docker.io/library/*` / `index.docker.io/*/*`.
// Matching runs a small state machine instead of a backtracking RegExp, so its cost is
// linear in the name whatever glob a policy author writes.
import { InvalidPolicyError, quote } from './errors.js';
import type { ImageReference } from './reference.js';

/** A compiled image glob. */
export interface Glob {
  /** The glob as written in the policy. */
  readonly source: string;
  /** What is matched after upstream's rewrites (`*` -> `index.docker.io/library/*`). */
  readonly pattern: string;
  /** True when the glob matches a normalized name (see {@link ImageReference.matchName}). */
  matches(name: string): boolean;
}

const VALID_GLOB = /^[a-zA-Z0-9\-_:/*.@]+$/;
const STAR = -1;
const GLOBSTAR = -2;
const SLASH = 0x2f;

/** Compiles a glob; throws {@link InvalidPolicyError} with code `INVALID_GLOB`. */
export function compileGlob(source: string): Glob {
  if (!VALID_GLOB.test(source)) {
    throw new InvalidPolicyError(
      'INVALID_GLOB',
      undefined,
      '',
      `invalid glob ${quote(source)}: only letters, digits, "-", "_", ":", "/", "*", "." and "@" are allowed`,
    );
  }
  const pattern = rewrite(source);
  if (!pattern.includes('*')) return { source, pattern, matches: (name) => name === pattern };
  const tokens = tokenize(pattern);
  return { source, pattern, matches: memoized((name) => run(tokens, name)) };
}

/** Names remembered per wildcard glob: a cluster admits the same few images over and over. */
const MEMO_ENTRIES = 1024;
const MEMO_NAME_LENGTH = 512;

/** `match` with its answers remembered, at most {@link MEMO_ENTRIES} names of bounded length. */
function memoized(match: (name: string) => boolean): (name: string) => boolean {
  const answers = new Map<string, boolean>();
  return (name) => {
    const known = answers.get(name);
    if (known !== undefined) return known;
    const answer = match(name);
    if (name.length <= MEMO_NAME_LENGTH) {
      if (answers.size >= MEMO_ENTRIES) answers.clear();
      answers.set(name, answer);
    }
    return answer;
  };
}

/** True when the glob matches the reference's {@link ImageReference.matchName}. */
export function globMatches(glob: Glob, reference: ImageReference): boolean {
  return glob.matches(reference.matchName);
}

function rewrite(source: string): string {
  if (source === '*') return 'index.docker.io/library/*';
  if (source === '*/*') return 'index.docker.io/*/*';
  const slash = source.indexOf('/');
  // References carry lowercase registry hosts, so the host part of a glob is lowercased too.
  return slash === -1 ? source : source.slice(0, slash).toLowerCase() + source.slice(slash);
}

/** Literal characters as char codes; a run of one `*` is STAR, a longer run is GLOBSTAR. */
function tokenize(pattern: string): Int32Array {
  const tokens: number[] = [];
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== '*') {
      tokens.push(pattern.charCodeAt(i));
      continue;
    }
    let end = i;
    while (pattern[end + 1] === '*') end++;
    tokens.push(end === i ? STAR : GLOBSTAR);
    i = end;
  }
  return Int32Array.from(tokens);
}

/** Simulates the glob's automaton: state `s` means "the first `s` tokens matched". */
function run(tokens: Int32Array, name: string): boolean {
  const size = tokens.length + 1;
  let current = new Uint8Array(size);
  let next = new Uint8Array(size);
  current[0] = 1;
  skipStars(tokens, current);
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    next.fill(0);
    let alive = false;
    for (let s = 0; s < tokens.length; s++) {
      if (current[s] === 0) continue;
      const token = tokens[s];
      if (token === GLOBSTAR || (token === STAR && c !== SLASH)) {
        next[s] = 1;
        alive = true;
      } else if (token === c) {
        next[s + 1] = 1;
        alive = true;
      }
    }
    if (!alive) return false;
    skipStars(tokens, next);
    [current, next] = [next, current];
  }
  return current[tokens.length] === 1;
}

/** A star may match nothing: whoever reached it has also reached the state after it. */
function skipStars(tokens: Int32Array, states: Uint8Array): void {
  tokens.forEach((token, s) => {
    if (token < 0 && states[s] === 1) states[s + 1] = 1;
  });
}
