// Registry credentials of a shell user for `signet verify` and `signet audit`: a Docker config file.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Keychain } from '@signet/registry';
import { InputError } from '../errors.js';

/**
 * The keychain of `path` (`--docker-config`), else of `$DOCKER_CONFIG/config.json` or
 * `~/.docker/config.json` when one exists. Only a file the user named is an error when unreadable.
 */
export function dockerCredentials(path: string | undefined): Keychain | undefined {
  const file = path ?? join(process.env.DOCKER_CONFIG ?? join(homedir(), '.docker'), 'config.json');
  try {
    return Keychain.fromDockerConfig(readFileSync(file, 'utf8'), file);
  } catch (error) {
    if (path !== undefined)
      throw new InputError(`cannot read --docker-config ${path}: ${(error as Error).message}`);
    return undefined;
  }
}
