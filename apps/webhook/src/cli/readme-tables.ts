// The README's flag tables live between `<!-- flags:COMMAND -->` and `<!-- /flags:COMMAND -->`
// and are generated from the commands' own flag definitions.
import { type CommandSpec, flagTable } from './flags.js';

/** `readme` with every command's table regenerated. */
export function withFlagTables(readme: string, commands: readonly CommandSpec[]): string {
  let text = readme;
  for (const command of commands) {
    const open = `<!-- flags:${command.name} -->`;
    const close = `<!-- /flags:${command.name} -->`;
    const start = text.indexOf(open);
    const end = text.indexOf(close);
    if (start < 0 || end < start) throw new Error(`the README has no ${open} ... ${close} section`);
    text = `${text.slice(0, start + open.length)}\n\n${flagTable(command)}\n\n${text.slice(end)}`;
  }
  return text;
}
