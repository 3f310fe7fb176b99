// What `/validate-policy` may spend (issue 21): its compiles run in capacity of its own, with the
// real CUE and Rego engines, and nothing they compiled is kept. Measured on the code before: 86
// distinct ~3 MB Rego policies sent for validation took the heap to its limit, each kept by the
// admission engines until two more snapshots came (never, with policy files).
import type { AdmissionRequest } from '@signet/k8s-types';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { ReviewContext } from '../../src/http/admission-app.js';
import { createLogger } from '../../src/logger.js';
import { WebhookPolicyEngines } from '../../src/policy/policy-engines.js';
import { parsePolicyYaml } from '../../src/policy/policy-file.js';
import { policyValidator } from '../../src/policy/policy-validation.js';
import { ValidationCapacity } from '../../src/policy/validation-capacity.js';

const logger = createLogger({ level: 'silent' });
const admission = new WebhookPolicyEngines(logger);
const capacity = new ValidationCapacity({ logger, concurrency: 2 });
const view = parsePolicyYaml('', 'signet-system');
const validate = policyValidator({
  view: () => view,
  // As signet.ts did before: the admission engines in the compile options.
  compile: { namespace: 'signet-system', engines: admission },
  capacity,
});

afterAll(async () => {
  await admission.close();
  await capacity.close();
});

/** A Rego policy of about `kb` KiB that compiles, distinct for each `seed`. */
function rego(seed: number, kb: number): string {
  const pad = 'x'.repeat(1000);
  const lines = ['package sigstore', 'default isCompliant = false', `isCompliant { input.seed == ${seed} }`];
  for (let i = 0; i < kb; i++) lines.push(`c${i} := "${pad}"`);
  return lines.join('\n');
}

function policyCreate(name: string, language: string, source: string): AdmissionRequest {
  return {
    uid: `uid-${name}`,
    kind: { group: 'policy.sigstore.dev', version: 'v1beta1', kind: 'ClusterImagePolicy' },
    resource: { group: 'policy.sigstore.dev', version: 'v1beta1', resource: 'clusterimagepolicies' },
    name,
    operation: 'CREATE',
    userInfo: { username: 'admin' },
    object: {
      apiVersion: 'policy.sigstore.dev/v1beta1',
      kind: 'ClusterImagePolicy',
      metadata: { name },
      spec: {
        images: [{ glob: 'registry.example/**' }],
        authorities: [{ static: { action: 'pass' } }],
        policy: { type: language, data: source },
      },
    },
    oldObject: null,
    dryRun: false,
  } as unknown as AdmissionRequest;
}

function context(ms = 20_000): ReviewContext {
  return { signal: new AbortController().signal, deadline: Date.now() + ms, budgetMs: ms };
}

describe('the policy validator', () => {
  it('keeps nothing it compiled, and never compiles in the admission engines', async () => {
    const sent = 12;
    for (let seed = 0; seed < sent; seed++) {
      const outcome = await validate(
        'validate-policy',
        policyCreate(`big-${seed}`, 'rego', rego(seed, 200)),
        context(),
      );
      expect(outcome.response).toMatchObject({ allowed: true });
      expect(await capacity.retained()).toBe(0);
    }
    // None of them is held by the engines admissions use...
    expect(admission.programs).toBe(0);
    expect(admission.loaded).toBe(false);
    // ...they were compiled in the validation engines, which released each one.
    expect(capacity.compiled).toBe(sent);
  }, 120_000);

  it('still refuses what does not compile', async () => {
    const outcome = await validate('validate-policy', policyCreate('broken', 'cue', 'a: ['), context());
    expect(outcome.response).toMatchObject({ allowed: false, status: { code: 422 } });
    expect(outcome.response.status?.message).toContain('the cue policy does not compile');
    expect(await capacity.retained()).toBe(0);
  });
});

describe('the validation capacity', () => {
  it('stops its engines when no check has run for a while, and starts them again for the next', async () => {
    const idle = new ValidationCapacity({ logger, concurrency: 1, idleMs: 50 });
    const compile = (source: string) =>
      idle.run(Date.now() + 20_000, async (tools) => {
        await tools.engines.compile('cue', source);
        await tools.cel.compile('true');
        return 'compiled';
      });
    expect(await compile('a: 1')).toEqual({ kind: 'checked', value: 'compiled' });
    expect(idle.loaded).toBe(true);
    await vi.waitFor(() => expect(idle.loaded).toBe(false));
    expect(await compile('b: 1')).toEqual({ kind: 'checked', value: 'compiled' });
    await idle.close();
    expect(idle.loaded).toBe(false);
  });

  const quick = () => Promise.resolve('done');

  it('runs a few checks at a time, lets a few wait, and refuses the rest as busy', async () => {
    const small = new ValidationCapacity({ logger, concurrency: 1, maxWaiting: 1 });
    let finish: (value: string) => void = () => undefined;
    const holding = small.run(
      Date.now() + 10_000,
      () => new Promise<string>((resolve) => (finish = resolve)),
    );
    const waiting = small.run(Date.now() + 10_000, quick);
    expect(await small.run(Date.now() + 10_000, quick)).toEqual({ kind: 'busy' });
    finish('held');
    expect(await holding).toEqual({ kind: 'checked', value: 'held' });
    expect(await waiting).toEqual({ kind: 'checked', value: 'done' });
    await small.close();
  });

  it('answers late what waits or runs past its deadline, and frees its place when it ends', async () => {
    const small = new ValidationCapacity({ logger, concurrency: 1, maxWaiting: 1 });
    // A check ends when its signal aborts, as the engines and CEL workers do.
    const untilAborted = small.run(
      Date.now() + 100,
      (tools) =>
        new Promise<string>((resolve) => tools.signal.addEventListener('abort', () => resolve('stopped'))),
    );
    expect(await small.run(Date.now() + 20, quick)).toEqual({ kind: 'late' });
    expect(await untilAborted).toEqual({ kind: 'late' });
    expect(await small.run(Date.now() + 1_000, quick)).toEqual({ kind: 'checked', value: 'done' });
    await small.close();
  });
});
