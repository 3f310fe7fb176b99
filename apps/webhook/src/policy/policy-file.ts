import { readFile } from 'node:fs/promises';
import { compileException, compilePolicy, InvalidPolicyError } from '@signet/core';
import { parseAllDocuments } from 'yaml';
import { InputError } from '../errors.js';
import { collectPolicyObjects, mergePolicyObjects, type PolicyObjects } from './policy-objects.js';

/**
 * Loads ClusterImagePolicies, TrustRoots, ImagePolicies, ImagePolicyExceptions, the config
 * ConfigMap, Secrets and ConfigMaps from a YAML file (one or more documents, or `kind: List`), for
 * use without a cluster (`--policy-file`, `signet verify`). YAML syntax errors name the document
 * and line; object errors name the field. Namespaced objects that name no namespace are in
 * `namespace`.
 */
export async function loadPolicyFile(path: string, namespace: string): Promise<PolicyObjects> {
  const text = await readFile(path, 'utf8');
  const objects = parsePolicyYaml(text, namespace, path);
  return { ...objects, problems: objects.problems.map((problem) => ({ ...problem, source: path })) };
}

/**
 * The policy objects of `paths`, merged, for every command that takes `--policy-file` (`serve`,
 * `verify`, `audit`); refused with an InputError when one is not usable (see below).
 */
export async function readPolicyFiles(paths: readonly string[], namespace: string): Promise<PolicyObjects> {
  const objects = mergePolicyObjects(await Promise.all(paths.map((path) => loadPolicyFile(path, namespace))));
  requireUsablePolicyFiles(objects);
  return objects;
}

/**
 * Files are the user's to fix before Signet starts: any object that does not parse, or a policy
 * whose globs or selectors are invalid, is an InputError naming the file, the object and the field.
 */
export function requireUsablePolicyFiles(objects: PolicyObjects): void {
  const problems = objects.problems.map((p) => `${p.source ?? 'policy YAML'}: ${p.object}: ${p.message}`);
  const compiles = (label: string, compile: () => unknown) => {
    try {
      compile();
    } catch (error) {
      if (!(error instanceof InvalidPolicyError)) throw error;
      problems.push(`${label}: ${error.message}`);
    }
  };
  for (const policy of objects.policies)
    compiles(`ClusterImagePolicy/${policy.metadata.name}`, () => compilePolicy(policy));
  for (const policy of objects.imagePolicies) {
    const { namespace, name } = policy.metadata;
    compiles(`ImagePolicy/${namespace}/${name}`, () => compilePolicy(policy));
  }
  for (const exception of objects.exceptions) {
    const { namespace, name } = exception.metadata;
    compiles(`ImagePolicyException/${namespace}/${name}`, () => compileException(exception));
  }
  if (problems.length > 0) {
    const more =
      problems.length > 1 ? ` (and ${problems.length - 1} more: ${problems.slice(1).join('; ')})` : '';
    throw new InputError(`cannot use the policy files: ${problems[0]}${more}`);
  }
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
