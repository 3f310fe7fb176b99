// Each engine's worker thread can run at a lower priority than the thread that uses it (Linux
// keeps a nice value per thread), so that an event loop with cheap work to answer is scheduled
// first; without the option the workers keep the priority they start with. The nice values are
// read from /proc, as `ps -L` reads them.
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createPolicyEngines, type PolicyEngines } from '../src/index.js';

/** The name and nice value of a thread of this process. */
function thread(tid: string | number): { name: string; nice: number } {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(fields[16]) };
}

/** The nice value of each thread of this process named `name`. */
function nicenessOf(name: string): number[] {
  return readdirSync('/proc/self/task')
    .map(thread)
    .filter((t) => t.name === name)
    .map((t) => t.nice);
}
// The main thread's id is the process's.
const mainNiceness = thread(process.pid).nice;
const lowered = Math.min(19, mainNiceness + 10);
const opened: PolicyEngines[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((engines) => engines.close()));
});

describe.runIf(process.platform === 'linux')('the engine worker threads', () => {
  it('run at the nice value asked for, the thread that uses them at its own', async () => {
    const engines = createPolicyEngines({ threadNiceness: 10 });
    opened.push(engines);
    expect(await (await engines.compile('cue', 'a: 1')).evaluate({ a: 1 })).toEqual({ passed: true });
    expect(
      await (await engines.compile('rego', 'package sigstore\nisCompliant := true')).evaluate({}),
    ).toEqual({
      passed: true,
    });
    expect(nicenessOf('cue-engine')).toEqual([lowered]);
    expect(nicenessOf('rego-engine')).toEqual([lowered]);
    expect(thread(process.pid).nice).toBe(mainNiceness);
  });

  it('keep the priority they start with by default', async () => {
    const engines = createPolicyEngines();
    opened.push(engines);
    await engines.compile('cue', 'a: 1');
    expect(nicenessOf('cue-engine')).toEqual([mainNiceness]);
  });
});
