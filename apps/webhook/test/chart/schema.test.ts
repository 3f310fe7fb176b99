// values.schema.json refuses a misspelt key at every level: `replicas: 3` or
// `webhook.failurepolicy: Ignore` must fail `helm template`/`helm install`, not be ignored. The
// cases are generated from the schema itself, so a subtree added later is covered without a new
// test; only the free-form maps listed below (Kubernetes types passed through) may stay open.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHART_DIR, HELM_MAJORS, type HelmMajor, NAMESPACE, RELEASE, renderChart, renderError, runHelm } from './render.js';

interface SchemaNode {
  readonly type?: string | readonly string[];
  readonly properties?: Record<string, SchemaNode>;
  readonly additionalProperties?: boolean | SchemaNode;
  readonly $ref?: string;
}

const schema = JSON.parse(readFileSync(`${CHART_DIR}values.schema.json`, 'utf8')) as SchemaNode & {
  readonly definitions: Record<string, SchemaNode>;
};

/** Objects whose keys are the user's (Kubernetes types passed through to the Pod). */
const FREE_FORM = new Set(['resources', 'resources.requests', 'resources.limits']);

function resolve(node: SchemaNode): SchemaNode {
  const name = node.$ref?.replace('#/definitions/', '');
  return name === undefined ? node : resolve(schema.definitions[name] as SchemaNode);
}

/** Every object of the values with declared keys, by its path (`''` for the top level). */
function objectsOf(node: SchemaNode, path: readonly string[] = []): { path: string[]; keys: string[] }[] {
  const resolved = resolve(node);
  if (resolved.properties === undefined) return [];
  const here = { path: [...path], keys: Object.keys(resolved.properties) };
  return [here, ...Object.entries(resolved.properties).flatMap(([key, child]) => objectsOf(child, [...path, key]))];
}

/** A plausible misspelling of the first key: `failurePolicy` -> `failurepolicy`, `enabled` -> `enable`. */
function typoOf(keys: readonly string[]): string {
  const [first] = keys as [string];
  const candidates = [first.toLowerCase(), first.slice(0, -1), `${first}s`];
  return candidates.find((c) => c !== first && !keys.includes(c)) as string;
}

/** `{a: {b: {typo: true}}}` for path [a, b]. */
function valuesWith(path: readonly string[], key: string): object {
  return path.reduceRight<object>((inner, part) => ({ [part]: inner }), { [key]: true });
}

const cases = objectsOf(schema)
  .filter(({ path }) => !FREE_FORM.has(path.join('.')))
  .map(({ path, keys }) => ({ where: path.join('.') || '(top level)', path, typo: typoOf(keys) }));

describe('values.schema.json', () => {
  it('closes every object with declared keys, except the free-form ones', () => {
    const open = objectsOf(schema)
      .filter(({ path }) => !FREE_FORM.has(path.join('.')))
      .filter(({ path }) => {
        const node = path.reduce<SchemaNode>((n, part) => resolve(resolve(n).properties?.[part] ?? {}), schema);
        return resolve(node).additionalProperties !== false;
      })
      .map(({ path }) => path.join('.') || '(top level)');
    expect(open).toEqual([]);
    // The generator sees the subtrees a user meets first.
    expect(cases.map((c) => c.where)).toEqual(
      expect.arrayContaining(['(top level)', 'image', 'webhook', 'webhook.validate', 'tls', 'verification', 'metrics.prometheusRule', 'audit']),
    );
  });
});

describe.each(HELM_MAJORS)('a misspelt key under %s', (major: HelmMajor) => {
  it('renders with the defaults', async () => {
    expect((await renderChart(major)).length).toBeGreaterThan(0);
  });

  it.each(cases)('at $where ($typo) fails helm template', async ({ path, typo }) => {
    const error = await renderError(major, valuesWith(path, typo));
    expect(error).toContain("values don't meet the specifications of the schema");
    expect(error).toContain(`'${typo}'`);
  });
});

// Helm 3's `install --dry-run=client` asks a cluster for its version first (see options.test.ts).
describe('a misspelt key under helm4 install', () => {
  it('fails helm install too, before anything is sent to a cluster', async () => {
    const run = await runHelm(
      'helm4',
      ['install', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--dry-run=client'],
      { replicas: 3, webhook: { failurepolicy: 'Ignore' } },
    );
    expect(run.ok).toBe(false);
    expect(run.stderr).toContain("'replicas'");
    expect(run.stderr).toContain("'failurepolicy'");
  });
});
