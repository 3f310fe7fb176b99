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

/** The objects of one parsed document: itself, or a `List`'s items. */
function objectsOf(value: unknown, where: string): KubeObject[] {
  if (value === null || value === undefined) return [];
  if (!isObject(value)) throw new InputError(`${where}: not a Kubernetes object`);
  const items = value.kind === 'List' && Array.isArray(value.items) ? value.items : [value];
  return items.filter((item): item is KubeObject => isObject(item));
}

/** Every object of a YAML or JSON text; items of a `List` are objects of their own. */
export function manifestObjects(text: string, source: string): KubeObject[] {
  // `kubectl get pods -A -o json` of a large cluster is megabytes: JSON.parse holds a fraction of
  // the memory of a YAML document model for the same text.
  if (/^\s*\{/.test(text)) {
    try {
      return objectsOf(JSON.parse(text), source);
    } catch (error) {
      if (error instanceof InputError) throw error;
      // Not JSON after all (a YAML flow mapping): the YAML parser says what is wrong.
    }
  }
  const objects: KubeObject[] = [];
  parseAllDocuments(text).forEach((document, index) => {
    const [error] = document.errors;
    if (error) throw new InputError(`${source}: document ${index + 1}: ${yamlProblem(error)}`);
    objects.push(...objectsOf(document.toJS({ maxAliasCount: 100 }), `${source}: document ${index + 1}`));
  });
  return objects;
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
