// Objects from manifest files for `signet audit -f`: files, directories (their .yaml, .yml and
// .json files, not recursing), or `-` for stdin; multi-document YAML and `kind: List`.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isObject, type KubeObject } from '@signet/k8s-types';
import { parseAllDocuments } from 'yaml';
import { InputError } from '../errors.js';
import { yamlProblem } from '../policy/policy-file.js';

const MANIFEST = /\.(ya?ml|json)$/;

export async function readManifests(
  paths: readonly string[],
  stdin: () => Promise<string>,
): Promise<KubeObject[]> {
  const objects: KubeObject[] = [];
  for (const path of paths) {
    if (path === '-') {
      objects.push(...manifestObjects(await stdin(), 'stdin'));
      continue;
    }
    const files = (await stat(path)).isDirectory()
      ? (await readdir(path))
          .filter((f) => MANIFEST.test(f))
          .sort()
          .map((f) => join(path, f))
      : [path];
    for (const file of files) objects.push(...manifestObjects(await readFile(file, 'utf8'), file));
  }
  return objects;
}

/** Every object of a YAML or JSON text; items of a `List` are objects of their own. */
export function manifestObjects(text: string, source: string): KubeObject[] {
  const objects: KubeObject[] = [];
  parseAllDocuments(text).forEach((document, index) => {
    const [error] = document.errors;
    if (error) throw new InputError(`${source}: document ${index + 1}: ${yamlProblem(error)}`);
    const value: unknown = document.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) return;
    if (!isObject(value)) throw new InputError(`${source}: document ${index + 1}: not a Kubernetes object`);
    const items = value.kind === 'List' && Array.isArray(value.items) ? value.items : [value];
    for (const item of items) if (isObject(item)) objects.push(item as KubeObject);
  });
  return objects;
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
