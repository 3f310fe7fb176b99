// htpasswd files for registries that ask for Basic credentials: bcrypt (the only scheme CNCF
// distribution accepts), hashed by bcryptjs from the npm registry, `user:$2b$05$...` lines as
// apache2-utils' `htpasswd -nbB` writes them (cost 5, its default: the registry checks the password
// on every request).
import { writeFile } from 'node:fs/promises';
import bcrypt from 'bcryptjs';
import { TestbedError } from './errors.js';

const COST = 5;

/** Writes an htpasswd file at `path` with one bcrypt entry per user. */
export async function writeHtpasswd(path: string, users: Readonly<Record<string, string>>): Promise<void> {
  const lines: string[] = [];
  for (const [user, password] of Object.entries(users)) {
    if (user === '' || /[:\s]/.test(user)) {
      throw new TestbedError(
        'COMMAND_FAILED',
        `an htpasswd user name cannot be empty or hold ':' or spaces: ${JSON.stringify(user)}`,
      );
    }
    lines.push(`${user}:${await bcrypt.hash(password, COST)}`);
  }
  await writeFile(path, `${lines.join('\n')}\n`);
}
