// Regenerates the flag tables of README.md from the CLI's flag definitions (after `pnpm build`):
//   pnpm --filter @signet/webhook docs:flags
import { readFileSync, writeFileSync } from 'node:fs';
import { COMMANDS } from '../dist/cli/main.js';
import { withFlagTables } from '../dist/cli/readme-tables.js';

const path = new URL('../README.md', import.meta.url);
writeFileSync(path, withFlagTables(readFileSync(path, 'utf8'), COMMANDS));
