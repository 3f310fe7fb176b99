// CUE and Rego through the real engines: how the verifier words their verdicts and failures
// (upstream's messages, warnings refusing as upstream's validator does, an engine failure as an
// infrastructure failure), and the document a spec-level policy sees.
import { createPolicyEngines, type PolicyEngines } from '@signet/policy-engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompiledSpecPolicy } from '../../src/policy/compile.js';
import { compilePolicyProgram, type ProgramContext, runProgram } from '../../src/policy/programs.js';
import type { AuthorityCheck } from '../../src/policy/results.js';
import { policyResult } from '../../src/policy/verify-policy.js';

const site = { policy: 'p', path: 'spec.policy', label: 'policy of the ClusterImagePolicy' };
const counts = { found: 1, verified: 1 };

describe('CUE and Rego programs', () => {
  let engines: PolicyEngines;
  let context: ProgramContext;
  beforeAll(() => {
    engines = createPolicyEngines({ limits: { evaluationTimeoutMs: 500 } });
    context = {
      engines,
      systemNamespace: 'cosign-system',
      lookupConfigMap: undefined,
      fetchRemote: undefined,
    };
  });
  afterAll(() => engines.close());

  const inputs = (document: unknown) => ({ cel: () => ({}), document: () => document });

  it('refuses a policy that does not compile, and says when the engine itself failed', async () => {
    await expect(compilePolicyProgram({ type: 'cue', data: 'a: [' }, site, context)).rejects.toMatchObject({
      code: 'INVALID_POLICY',
      message: expect.stringContaining('the cue policy does not compile: failed to compile the cue policy'),
    });
    const broken = createPolicyEngines({ wasmPath: () => '/nonexistent.wasm' });
    await expect(
      compilePolicyProgram({ type: 'rego', data: 'package sigstore' }, site, { ...context, engines: broken }),
    ).rejects.toMatchObject({
      code: 'POLICY_ENGINE_FAILED',
      message: expect.stringContaining('the rego engine failed'),
    });
    await broken.close();
    await expect(
      compilePolicyProgram(
        { type: 'cue', remote: { url: 'not a url', sha256sum: 'a'.repeat(64) } },
        site,
        context,
      ),
    ).rejects.toThrow('"not a url" is invalid');
  });

  it("words failures as upstream does, and refuses a passing Rego policy's warning as upstream's validator does", async () => {
    const rego = await compilePolicyProgram(
      {
        type: 'rego',
        data: 'package sigstore\nisCompliant[r] { r := {"result": input.ok, "warning": "old base image", "error": "not ok"} }',
      },
      site,
      context,
    );
    expect(await runProgram(rego, 'sbom', inputs({ ok: true }))).toEqual({
      passed: false,
      reason: 'warning: old base image',
      infrastructure: false,
    });
    expect(await runProgram(rego, 'sbom', inputs({ ok: false }))).toEqual({
      passed: false,
      reason:
        "failed evaluating rego policy for type sbom: policy is not compliant for query 'isCompliant = data.sigstore.isCompliant' with errors: not ok",
      infrastructure: false,
    });
    const cue = await compilePolicyProgram({ type: 'cue', data: 'ok: true' }, site, context);
    expect(await runProgram(cue, 'ClusterImagePolicy', inputs({ ok: true }))).toEqual({ passed: true });
  });

  it('reports a policy the engine had to stop as an infrastructure failure', async () => {
    const runaway = await compilePolicyProgram(
      {
        type: 'rego',
        data: 'package sigstore\nisCompliant { count([x | x := numbers.range(1, 1000000000)[_]]) > 0 }',
      },
      site,
      context,
    );
    expect(await runProgram(runaway, 'x', inputs({}))).toMatchObject({
      passed: false,
      infrastructure: true,
      reason: 'the rego policy did not finish within 500 ms and was stopped',
    });
  });
});

describe("the spec-level policy's document (policy-controller's PolicyResult)", () => {
  const spec: CompiledSpecPolicy = {
    program: {
      language: 'cel',
      source: 'true',
      cel: { source: 'true', evaluate: async () => ({ passed: true }) },
    },
    includeSpec: true,
    includeObjectMeta: true,
    includeTypeMeta: false,
    fetchConfigFile: false,
  };
  const keyless = { type: 'keyless', issuer: 'https://issuer.example', subject: 'dev@example.com' } as const;
  const key = { type: 'key', name: 'k', fingerprint: 'f' } as const;
  const passed = (authority: string, more: Partial<AuthorityCheck>): AuthorityCheck =>
    ({
      authority,
      passed: true,
      signer: undefined,
      static: false,
      counts,
      signatures: [],
      attestations: {},
      rejected: [],
      ...more,
    }) as AuthorityCheck;
  const statement = (predicateType: string) => ({ predicateType }) as never;
  const ids = (n: string) => ({ id: `id-${n}`, digest: `sha256:${n}`, github: {} });

  it('leaves out what is empty, as Go does with omitempty', () => {
    const checks: AuthorityCheck[] = [
      passed('signed', {
        signatures: [
          { ...ids('1'), source: 's', format: 'legacy-signature', signer: keyless, statement: undefined },
          { ...ids('2'), source: 's', format: 'legacy-signature', signer: key, statement: undefined },
        ],
      }),
      passed('attested', {
        attestations: {
          sbom: [
            {
              ...ids('3'),
              github: { githubWorkflowRepo: 'acme/app' },
              source: 'a',
              format: 'bundle',
              signer: { ...keyless, subject: '' },
              statement: statement('t'),
            },
          ],
        },
      }),
      passed('allowed', { static: true }),
      passed('nothing', {}),
      {
        authority: 'failed',
        passed: false,
        failure: { kind: 'policy', reason: 'r', code: 'STATIC_FAIL' },
        counts,
        rejected: [],
      },
    ];
    expect(
      policyResult(checks, spec, { spec: { replicas: 1 }, metadata: null, typemeta: { kind: 'Pod' } }),
    ).toEqual({
      authorityMatches: {
        signed: {
          signatures: [
            { id: 'id-1', subject: 'dev@example.com', issuer: 'https://issuer.example' },
            { id: 'id-2' },
          ],
        },
        attested: {
          attestations: {
            sbom: [
              {
                id: 'id-3',
                subject: '',
                issuer: 'https://issuer.example',
                githubWorkflowRepo: 'acme/app',
                predicateType: 't',
                digest: 'sha256:3',
              },
            ],
          },
        },
        allowed: { static: true },
      },
      spec: { replicas: 1 },
    });
    expect(policyResult([], spec, {})).toEqual({});
  });
});
