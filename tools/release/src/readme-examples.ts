// The runnable examples of a package's README. An example is a fenced `ts` or `js` block whose
// first line names its file and how to run it (`// verify.ts — node verify.ts IMAGE ...`); its
// expected output is a `console` block whose `$ ... node <file> ...` lines are followed by what
// the command prints, where `…` stands for any text.

export interface ReadmeExample {
  /** `example.ts`, `example.cjs`, ... */
  readonly file: string;
  /** The block without its naming line (which stays a comment in the file a reader copies). */
  readonly code: string;
  readonly module: 'esm' | 'cjs';
}

export interface ExpectedRun {
  readonly file: string;
  /** The command as written (`node verify.ts 127.0.0.1:5000/team/app@sha256:7d77… cosign.pub`). */
  readonly command: string;
  readonly output: readonly string[];
}

export interface ReadmeExamples {
  readonly examples: readonly ReadmeExample[];
  readonly runs: readonly ExpectedRun[];
}

const FENCE = /^```(\w*)\n([\s\S]*?)^```$/gm;
const NAMING_LINE = /^\/\/ ([\w.-]+\.(?:ts|mts|js|mjs|cjs)) — (?:[A-Z_]+=\S+ )*node \1\b/;
const COMMAND = /^\$ (?:[A-Z_]+=\S+ )*node ([\w.-]+\.(?:ts|mts|js|mjs|cjs))\b/;

function exampleOf(body: string): ReadmeExample | undefined {
  const [first = '', ...rest] = body.split('\n');
  const file = NAMING_LINE.exec(first)?.[1];
  if (file === undefined) return undefined;
  return { file, code: `${first}\n${rest.join('\n')}`, module: file.endsWith('.cjs') ? 'cjs' : 'esm' };
}

function runsOf(body: string): ExpectedRun[] {
  const runs: ExpectedRun[] = [];
  let current: { file: string; command: string; output: string[] } | undefined;
  for (const line of body.replace(/\n$/, '').split('\n')) {
    const file = COMMAND.exec(line)?.[1];
    if (line.startsWith('$ ')) {
      if (current) runs.push(current);
      current = file === undefined ? undefined : { file, command: line.slice(2), output: [] };
    } else {
      current?.output.push(line);
    }
  }
  if (current) runs.push(current);
  return runs;
}

export function readmeExamples(markdown: string): ReadmeExamples {
  const examples: ReadmeExample[] = [];
  const runs: ExpectedRun[] = [];
  for (const [, language, body = ''] of markdown.matchAll(FENCE)) {
    if (language === 'console') runs.push(...runsOf(body));
    const example = language === 'ts' || language === 'js' ? exampleOf(body) : undefined;
    if (example) examples.push(example);
  }
  return { examples, runs };
}

/** Whether `actual` (a program's stdout) prints `expected` line by line, `…` matching any text. */
export function printsExpected(expected: readonly string[], actual: string): boolean {
  const lines = actual.replace(/\n$/, '').split('\n');
  if (lines.length !== expected.length) return false;
  return expected.every((pattern, i) => {
    const parts = pattern.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    return new RegExp(`^${parts.join('.*')}$`).test(lines[i]?.trimEnd() ?? '');
  });
}
