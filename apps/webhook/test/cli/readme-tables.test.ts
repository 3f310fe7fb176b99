import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/main.js';
import { withFlagTables } from '../../src/cli/readme-tables.js';

describe("the README's flag tables", () => {
  it('are the ones the CLI definitions generate (run `pnpm --filter @signet/webhook docs:flags`)', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toBe(withFlagTables(readme, COMMANDS));
  });

  it('needs a marked section per command', () => {
    expect(() => withFlagTables('# nothing here', COMMANDS)).toThrow(/no <!-- flags:serve -->/);
  });
});
