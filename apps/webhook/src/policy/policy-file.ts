import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { InputError } from '../errors.js';
import { collectPolicyObjects, type PolicyObjects } from './policy-objects.js';

/**
 * Loads ClusterImagePolicies, TrustRoots, the config ConfigMap and Secrets from a YAML file (one
 * or more documents, or `kind: List`), for use without a cluster (`--policy-file`, `signet
 * verify`). YAML syntax errors name the document and line; object errors name the field.
 */
export async function loadPolicyFile(path: string, namespace: string): Promise<PolicyObjects> {
  const text = await readFile(path, 'utf8');
  return parsePolicyYaml(text, namespace, path);
}

export function parsePolicyYaml(text: string, namespace: string, source = 'policy YAML'): PolicyObjects {
  const documents = parseAllDocuments(text, { prettyErrors: true });
  const objects: unknown[] = [];
  documents.forEach((document, index) => {
    const [error] = document.errors;
    if (error) {
      throw new InputError(`${source}: document ${index + 1}: ${yamlProblem(error)}`, { cause: error });
    }
    const value: unknown = document.toJS({ maxAliasCount: 100 });
    const list = value as { kind?: unknown; items?: unknown };
    if (list && list.kind === 'List' && Array.isArray(list.items)) objects.push(...list.items);
    else objects.push(value);
  });
  return collectPolicyObjects(objects, namespace);
}

/** The first line of a YAML error (the rest is a code frame), without its trailing colon. */
export function yamlProblem(error: Error): string {
  return (error.message.split('\n')[0] ?? error.message).replace(/:$/, '');
}
