import { describe, expect, it } from 'vitest';
import { printsExpected, readmeExamples } from '../src/readme-examples.ts';

const README = [
  '# @signet/x',
  '',
  '```ts',
  '// verify.ts — node verify.ts IMAGE KEY',
  "console.log('a');",
  '```',
  '',
  '```js',
  '// example.cjs — node example.cjs',
  "console.log('b');",
  '```',
  '',
  '```ts',
  '// not an example: no file named on the first line',
  '```',
  '',
  '```console',
  '$ node verify.ts 127.0.0.1:5000/app@sha256:7d77… cosign.pub',
  'release passed (authority release-key)',
  '$ VAULT_ADDR=http://127.0.0.1:8200 node verify.ts other cosign.pub',
  'release failed: no signature found',
  '$ kubectl get pods',
  'NAME READY',
  '```',
  '',
].join('\n');

describe('readmeExamples', () => {
  it('finds the named blocks and the output of each `node <file>` command', () => {
    const { examples, runs } = readmeExamples(README);
    expect(examples.map((e) => [e.file, e.module])).toEqual([
      ['verify.ts', 'esm'],
      ['example.cjs', 'cjs'],
    ]);
    expect(examples[0]?.code).toBe("// verify.ts — node verify.ts IMAGE KEY\nconsole.log('a');\n");
    expect(runs).toEqual([
      {
        file: 'verify.ts',
        command: 'node verify.ts 127.0.0.1:5000/app@sha256:7d77… cosign.pub',
        output: ['release passed (authority release-key)'],
      },
      {
        file: 'verify.ts',
        command: 'VAULT_ADDR=http://127.0.0.1:8200 node verify.ts other cosign.pub',
        output: ['release failed: no signature found'],
      },
    ]);
  });

  it('compares output line by line, `…` standing for any text', () => {
    expect(printsExpected(['alpine:3.20@sha256:bbbb…'], `alpine:3.20@sha256:${'b'.repeat(64)}\n`)).toBe(true);
    expect(printsExpected(['a', 'b'], 'a\nb\n')).toBe(true);
    expect(printsExpected(['a', 'b'], 'a\n')).toBe(false);
    expect(printsExpected(['a'], 'a\nextra\n')).toBe(false);
    expect(printsExpected(['release passed (authority release-key)'], 'release failed: no signature\n')).toBe(
      false,
    );
    expect(printsExpected(['(x)'], 'x\n')).toBe(false);
  });
});
