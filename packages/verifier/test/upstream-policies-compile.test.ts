// Every CUE and Rego policy of policy-controller's own material (test/testdata/policy-controller and
// examples/policies of its Go module, v0.15.1, read at test time) compiles in the real engines:
// attestation policies and spec-level ones, inline or from the ConfigMaps its e2e scripts create.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type ClusterImagePolicy,
  type Policy,
  PolicyParseError,
  parseClusterImagePolicy,
} from '@signet/k8s-types';
import { createPolicyEngines, type PolicyEngines } from '@signet/policy-engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { compilePolicyProgram } from '../src/policy/programs.js';
import { loadTestbed } from './support/registry-helpers.js';

const DIRECTORIES = [
  'test/testdata/policy-controller/valid',
  'test/testdata/policy-controller/e2e',
  'test/testdata/policy-controller/tester',
  'examples/policies',
];

interface Found {
  readonly file: string;
  readonly cip: ClusterImagePolicy;
  readonly path: string;
  readonly policy: Policy;
}

/** Every policy block (attestation or spec-level) of every ClusterImagePolicy in a YAML file. */
function policiesIn(file: string, text: string): Found[] {
  const found: Found[] = [];
  for (const document of parseAllDocuments(text)) {
    const object = document.toJS() as { kind?: string } | null;
    if (object?.kind !== 'ClusterImagePolicy') continue;
    // The KMS examples are templates (`awskms:///arn:aws:kms:<< region >>:...`) that upstream too
    // refuses as written; they hold no CUE or Rego. A CUE/Rego policy that does not parse fails.
    let cip: ClusterImagePolicy;
    try {
      cip = parseClusterImagePolicy(object, { failOnEmptyAuthorities: false });
    } catch (error) {
      if (error instanceof PolicyParseError && !/"type":"(cue|rego)"/.test(JSON.stringify(object))) continue;
      throw error;
    }
    cip.spec.authorities.forEach((authority, a) => {
      (authority.attestations ?? []).forEach((attestation, i) => {
        if (attestation.policy) {
          found.push({
            file,
            cip,
            path: `spec.authorities[${a}].attestations[${i}].policy`,
            policy: attestation.policy,
          });
        }
      });
    });
    if (cip.spec.policy) found.push({ file, cip, path: 'spec.policy', policy: cip.spec.policy });
  }
  return found;
}

/** The ConfigMaps a script creates: `kubectl create -n NS configmap NAME --from-file=KEY=PATH`. */
async function readConfigMaps(upstream: string, script: string, into: Map<string, Record<string, string>>) {
  for (const m of script.matchAll(/kubectl create -n (\S+) configmap (\S+) --from-file=(\S+)=\.\/(\S+)/g)) {
    const [, namespace, name, key, path] = m as unknown as [string, string, string, string, string];
    const data = into.get(`${namespace}/${name}`) ?? {};
    data[key] = await readFile(join(upstream, path), 'utf8');
    into.set(`${namespace}/${name}`, data);
  }
}

describe("policy-controller's CUE and Rego policies compile", () => {
  let upstream = '';
  let engines: PolicyEngines;
  const found: Found[] = [];
  const configMaps = new Map<string, Record<string, string>>();

  beforeAll(async () => {
    upstream = await (await loadTestbed()).policyControllerModule();
    engines = createPolicyEngines();
    for (const directory of DIRECTORIES) {
      for (const name of (await readdir(join(upstream, directory)))
        .filter((n) => /\.ya?ml$/.test(n))
        .sort()) {
        const file = `${directory}/${name}`;
        found.push(...policiesIn(file, await readFile(join(upstream, file), 'utf8')));
      }
    }
    for (const script of (await readdir(join(upstream, 'test'))).filter((n) => n.endsWith('.sh'))) {
      await readConfigMaps(upstream, await readFile(join(upstream, 'test', script), 'utf8'), configMaps);
    }
  }, 10 * 60_000);

  afterAll(() => engines?.close());

  it('finds upstream policies in every language it has', () => {
    const types = found.map((f) => f.policy.type);
    expect(types.filter((t) => t === 'cue').length).toBeGreaterThanOrEqual(30);
    expect(types).toContain('rego');
    expect(found.some((f) => f.policy.remote !== undefined)).toBe(true);
    expect(found.some((f) => f.policy.configMapRef !== undefined)).toBe(true);
  });

  it('compiles each one (a remote one is fetched, here from nowhere: it fails as a fetch, not as a policy)', async () => {
    const outcomes: string[] = [];
    for (const { file, cip, path, policy } of found) {
      const site = { policy: cip.metadata.name, path, label: file };
      try {
        const program = await compilePolicyProgram(policy, site, {
          engines,
          systemNamespace: 'cosign-system',
          lookupConfigMap: (namespace, name) => configMaps.get(`${namespace}/${name}`),
          fetchRemote: async (url) => {
            throw new Error(`no network here for ${url}`);
          },
        });
        outcomes.push(`${file} ${path}: ${program.language}`);
      } catch (error) {
        outcomes.push(`${file} ${path}: ${(error as { code?: string }).code}`);
      }
    }
    const failed = outcomes.filter((o) => !/: (cue|rego)$/.test(o));
    expect(failed).toEqual([
      expect.stringMatching(
        /^test\/testdata\/policy-controller\/e2e\/cip-policy-from-url.yaml spec.policy: REMOTE_POLICY_FAILED$/,
      ),
    ]);
    console.log(`upstream policies compiled: ${outcomes.length - failed.length} of ${outcomes.length}`);
  });
});
