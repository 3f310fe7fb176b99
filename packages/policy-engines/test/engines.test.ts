// The real engines (cuelang.org/go and OPA compiled to WebAssembly by this package's build), run
// in their worker threads: semantics as policy-controller's, and the bounds on a runaway policy.

import { engine as cueEngine } from '@signet/policy-engine-cue';
import { engine as regoEngine } from '@signet/policy-engine-rego';
import { afterAll, describe, expect, it } from 'vitest';
import { ENGINE_ABI, locateEngine } from '../src/engine-package.js';
import {
  createPolicyEngines,
  isPolicyLanguage,
  PolicyEngineError,
  type PolicyEngines,
  PolicySourceError,
} from '../src/index.js';

const events: string[] = [];
const engines: PolicyEngines = createPolicyEngines({
  limits: { evaluationTimeoutMs: 1_500, memoryLimitBytes: 192 * 1024 * 1024 },
  onEvent: (event) => events.push(event.type),
});
afterAll(() => engines.close());

const CUSTOM = {
  _type: 'https://in-toto.io/Statement/v0.1',
  predicateType: 'https://cosign.sigstore.dev/attestation/v1',
  subject: [{ name: 'registry.local/demo', digest: { sha256: 'ab'.repeat(32) } }],
  predicate: { Data: 'foobar e2e test', Timestamp: '2026-12-01T10:00:00Z' },
};

describe('CUE', () => {
  it('passes a document the policy unifies with, and names the conflicting field otherwise', async () => {
    const policy = await engines.compile(
      'cue',
      'import "time"\nbefore: time.Parse(time.RFC3339, "2049-10-09T17:10:27Z")\npredicate: {\n  Data: "foobar e2e test"\n  Timestamp: <before\n}\n',
    );
    expect(await policy.evaluate(CUSTOM)).toEqual({ passed: true });
    const failed = await policy.evaluate({ ...CUSTOM, predicate: { ...CUSTOM.predicate, Data: 'other' } });
    expect(failed).toMatchObject({ passed: false });
    expect(failed.passed || failed.reason).toMatch(
      /^failed to evaluate the policy with error: predicate.Data: conflicting values "other" and "foobar e2e test"/,
    );
  });

  it('takes JSON text as it is', async () => {
    const policy = await engines.compile('cue', 'count: >2');
    expect(await policy.evaluate('{"count": 3}')).toEqual({ passed: true });
    expect(await policy.evaluate('{"count": 1}')).toMatchObject({ passed: false });
  });

  it('refuses a policy that does not compile', async () => {
    await expect(engines.compile('cue', 'a: [')).rejects.toThrow(PolicySourceError);
    await expect(engines.compile('cue', 'a: [')).rejects.toThrow(/failed to compile the cue policy/);
  });

  it('stops a policy that allocates without bound, then evaluates again', async () => {
    // A small memory cap and long deadlines: memory runs out first, however loaded the machine is.
    const small = createPolicyEngines({
      limits: { memoryLimitBytes: 64 * 1024 * 1024, compileTimeoutMs: 120_000, evaluationTimeoutMs: 120_000 },
    });
    const error = await small
      .compile('cue', 'import "list"\nx: [for i in list.Range(0, 50000000, 1) {a: i}]')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PolicyEngineError);
    expect(error).toMatchObject({ code: 'ENGINE_CRASHED', message: /exhausted the engine's memory/ });
    const policy = await small.compile('cue', 'a: 1');
    expect(await policy.evaluate({ a: 1 })).toEqual({ passed: true });
    await small.close();
  }, 150_000);
});

describe('Rego', () => {
  const BOOL = `package sigstore
default isCompliant = false
isCompliant {
  input.predicateType == "https://cosign.sigstore.dev/attestation/v1"
  input.predicate.Data == "foobar e2e test"
}`;

  it('evaluates data.sigstore.isCompliant in Rego v0 syntax', async () => {
    const policy = await engines.compile('rego', BOOL);
    expect(await policy.evaluate(CUSTOM)).toEqual({ passed: true });
    expect(await policy.evaluate({ ...CUSTOM, predicate: { Data: 'x' } })).toEqual({
      passed: false,
      reason: "policy is not compliant for query 'isCompliant = data.sigstore.isCompliant'",
    });
  });

  it('reads the result objects: the error of a failing one, the warning of a passing one', async () => {
    const policy = await engines.compile(
      'rego',
      `package sigstore
isCompliant[response] {
  input.ok == true
  response := {"result": true, "warning": "deprecated base image"}
}
isCompliant[response] {
  input.ok == false
  response := {"result": false, "error": "the image is too old", "warning": ""}
}`,
    );
    expect(await policy.evaluate({ ok: true })).toEqual({
      passed: true,
      warning: 'warning: deprecated base image',
    });
    expect(await policy.evaluate({ ok: false })).toEqual({
      passed: false,
      reason:
        "policy is not compliant for query 'isCompliant = data.sigstore.isCompliant' with errors: the image is too old",
    });
  });

  it("refuses a module that does not compile, with OPA's message", async () => {
    await expect(engines.compile('rego', 'package sigstore\nisCompliant {')).rejects.toThrow(
      /rego_parse_error/,
    );
  });

  it('stops a policy that runs past the deadline, and the engine serves the next request', async () => {
    const runaway = await engines.compile(
      'rego',
      'package sigstore\nisCompliant { count([x | x := numbers.range(1, 1000000000)[_]]) > 0 }',
    );
    const started = Date.now();
    await expect(runaway.evaluate({})).rejects.toMatchObject({
      code: 'ENGINE_TIMEOUT',
      message: 'the rego policy did not finish within 1500 ms and was stopped',
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    const policy = await engines.compile('rego', BOOL);
    expect(await policy.evaluate(CUSTOM)).toEqual({ passed: true });
    expect(events).toContain('stopped');
  });

  it('compiles a live policy again in a restarted engine', async () => {
    const policy = await engines.compile('rego', BOOL);
    const runaway = await engines.compile(
      'rego',
      'package sigstore\nisCompliant { count([x | x := numbers.range(1, 1000000000)[_]]) > 0 }',
    );
    await expect(runaway.evaluate({})).rejects.toMatchObject({ code: 'ENGINE_TIMEOUT' });
    expect(await policy.evaluate(CUSTOM)).toEqual({ passed: true });
  });

  it('forgets a released policy', async () => {
    const policy = await engines.compile('rego', BOOL);
    policy.release();
    policy.release();
    expect(await policy.evaluate(CUSTOM)).toMatchObject({ passed: false, reason: /no such policy|released/ });
  });
});

describe('the engines', () => {
  it('fail as unavailable when the engine is not built, and load nothing before the first compile', async () => {
    const missing = createPolicyEngines({ wasmPath: () => '/nonexistent/cue.wasm' });
    await expect(missing.compile('cue', 'a: 1')).rejects.toMatchObject({ code: 'ENGINE_UNAVAILABLE' });
    await missing.close();
    await expect(missing.compile('cue', 'a: 1')).rejects.toMatchObject({ code: 'ENGINE_CLOSED' });
  });

  it('bound the requests waiting', async () => {
    const small = createPolicyEngines({ limits: { maxQueued: 2 } });
    const policy = await small.compile('cue', 'a: 1');
    const results = await Promise.allSettled([1, 2, 3, 4].map(() => policy.evaluate({ a: 1 })));
    expect(
      results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason),
    ).toEqual([
      expect.objectContaining({ code: 'ENGINE_BUSY' }),
      expect.objectContaining({ code: 'ENGINE_BUSY' }),
    ]);
    await small.close();
    await expect(policy.evaluate({ a: 1 })).rejects.toMatchObject({ code: 'ENGINE_CLOSED' });
  });

  it('count the policies they keep, and keep none released', async () => {
    const counted = createPolicyEngines();
    expect(counted.programs()).toEqual({ cue: 0, rego: 0 });
    const one = await counted.compile('cue', 'a: 1');
    await counted.compile('cue', 'b: 1');
    await expect(counted.compile('cue', 'a: [')).rejects.toThrow(PolicySourceError);
    expect(counted.programs()).toEqual({ cue: 2, rego: 0 });
    one.release();
    expect(counted.programs()).toEqual({ cue: 1, rego: 0 });
    await counted.close();
  });

  // Issue 21: a compile whose caller was answered must not hold the engine. A CUE comprehension
  // over 300 x 300 elements takes the real engine far longer than any review.
  const SLOW_CUE = 'import "list"\nx: [for a in list.Range(0, 300, 1) for b in list.Range(0, 300, 1) {a*b}]';

  it('stop a compile its caller gave up, drop one still waiting, and serve the next', async () => {
    const stopped: string[] = [];
    const own = createPolicyEngines({
      onEvent: (event) => event.type === 'stopped' && stopped.push(event.reason),
    });
    await own.compile('cue', 'a: 1');
    const running = new AbortController();
    const slow = own.compile('cue', SLOW_CUE, { signal: running.signal });
    const waiting = new AbortController();
    const queued = own.compile('cue', 'b: 1', { signal: waiting.signal });
    waiting.abort(new Error('answered'));
    await expect(queued).rejects.toMatchObject({
      code: 'ENGINE_CANCELLED',
      message: 'the cue request was abandoned by its caller',
      cause: new Error('answered'),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    running.abort(new Error('answered'));
    await expect(slow).rejects.toMatchObject({ code: 'ENGINE_CANCELLED' });
    expect(stopped).toEqual(['compile abandoned by its caller']);
    await expect(own.compile('cue', 'c: 1', { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'ENGINE_CANCELLED',
    });
    // A fresh worker: the next compile does not wait for the abandoned one.
    const next = await own.compile('cue', 'd: 1');
    expect(await next.evaluate({ d: 1 })).toEqual({ passed: true });
    expect(own.programs()).toEqual({ cue: 2, rego: 0 });
    await own.close();
  });

  it('name their languages', () => {
    expect(isPolicyLanguage('cue')).toBe(true);
    expect(isPolicyLanguage('cel')).toBe(false);
  });
});

// Which package each language comes from. A package that is not installed at all is
// test/engine-packages.test.ts (a real install without it); here, what a package may export.
describe('the language packages', () => {
  it('are found by name, each engine in its own package', async () => {
    expect(await locateEngine('cue')).toBe(cueEngine.wasmPath);
    expect(await locateEngine('rego')).toBe(regoEngine.wasmPath);
    expect(cueEngine.wasmPath).toMatch(/\/policy-engine-cue\/engines\/cue\.wasm$/);
    expect(regoEngine.wasmPath).toMatch(/\/policy-engine-rego\/engines\/rego\.wasm$/);
    expect([cueEngine.abi, regoEngine.abi]).toEqual([ENGINE_ABI, ENGINE_ABI]);
  });

  it('are refused when they are not an engine of this language or interface', async () => {
    const exporting = (engine: unknown) => async () => ({ engine });
    await expect(locateEngine('cue', exporting(undefined))).rejects.toMatchObject({
      code: 'ENGINE_UNAVAILABLE',
      message: '@signet/policy-engine-cue does not export a cue engine',
    });
    await expect(locateEngine('cue', exporting(regoEngine))).rejects.toMatchObject({
      code: 'ENGINE_UNAVAILABLE',
    });
    await expect(locateEngine('rego', exporting({ ...regoEngine, abi: 2 }))).rejects.toMatchObject({
      code: 'ENGINE_UNAVAILABLE',
      message: `@signet/policy-engine-rego implements engine interface 2, this @signet/policy-engines speaks ${ENGINE_ABI}: install the same version of both`,
    });
  });

  it('that fail to load are unavailable, not missing, and are looked for again', async () => {
    const broken = new SyntaxError('Unexpected token');
    await expect(locateEngine('rego', () => Promise.reject(broken))).rejects.toMatchObject({
      code: 'ENGINE_UNAVAILABLE',
      message: '@signet/policy-engine-rego did not load: SyntaxError: Unexpected token',
      cause: broken,
    });
    let calls = 0;
    const flaky = createPolicyEngines({
      wasmPath: (language) => {
        calls += 1;
        if (calls === 1) throw new PolicyEngineError('ENGINE_NOT_INSTALLED', `no ${language}`);
        return cueEngine.wasmPath;
      },
    });
    await expect(flaky.compile('cue', 'a: 1')).rejects.toMatchObject({ code: 'ENGINE_NOT_INSTALLED' });
    const policy = await flaky.compile('cue', 'a: 1');
    expect(await policy.evaluate({ a: 1 })).toEqual({ passed: true });
    expect(calls).toBe(2);
    await flaky.close();
  });
});
