// htpasswd files (bcrypt, the only scheme CNCF distribution accepts) for registries that ask for
// Basic credentials, written with apache2-utils' `htpasswd`.
import { writeFile } from 'node:fs/promises';
import { TestbedError } from './errors.js';
import { runCommand } from './exec.js';

/** Writes an htpasswd file at `path` with one bcrypt entry per user. Needs `htpasswd` (apache2-utils). */
export async function writeHtpasswd(path: string, users: Readonly<Record<string, string>>): Promise<void> {
  const lines: string[] = [];
  for (const [user, password] of Object.entries(users)) {
    try {
      const { stdout } = await runCommand('htpasswd', ['-nbB', user, password], { timeoutMs: 30_000 });
      lines.push(stdout.trim());
    } catch (error) {
      throw new TestbedError(
        'COMMAND_FAILED',
        'writing an htpasswd file needs `htpasswd` (Debian package apache2-utils; .ci/prepare installs it)',
        { cause: error },
      );
    }
  }
  await writeFile(path, `${lines.join('\n')}\n`);
}
