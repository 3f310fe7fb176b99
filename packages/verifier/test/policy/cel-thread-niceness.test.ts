// The CEL workers can run at a lower priority than the thread that uses them (Linux keeps a nice
// value per thread), so that an event loop with cheap work to answer is scheduled first; without
// the option they keep the priority they start with. Read from /proc, as `ps -L` reads them.
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CelWorkers, type CelWorkersOptions } from '../../src/policy/cel-workers.js';

/** The name and nice value of a thread of this process. */
function thread(tid: string | number): { name: string; nice: number } {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(fields[16]) };
}

/** The nice value of each CEL worker thread of this process. */
function celNiceness(): number[] {
  return readdirSync('/proc/self/task')
    .map(thread)
    .filter((t) => t.name === 'cel-worker')
    .map((t) => t.nice);
}
// The main thread's id is the process's.
const mainNiceness = thread(process.pid).nice;
const pools: CelWorkers[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

async function busy(options: CelWorkersOptions): Promise<void> {
  const pool = new CelWorkers({ workers: 2, ...options });
  pools.push(pool);
  // Two at once: both workers start.
  const programs = await Promise.all([pool.compile('x == 1'), pool.compile('x == 2')]);
  expect(await Promise.all(programs.map((program) => program.evaluate({ x: 1 })))).toEqual([
    { passed: true },
    { passed: false, reason: 'CEL policy returned false' },
  ]);
  expect(pool.stats.workers).toBe(2);
}

describe.runIf(process.platform === 'linux')('CEL worker threads', () => {
  it('run at the nice value asked for, the thread that uses them at its own', async () => {
    await busy({ threadNiceness: 10 });
    expect(celNiceness()).toEqual([Math.min(19, mainNiceness + 10), Math.min(19, mainNiceness + 10)]);
    expect(thread(process.pid).nice).toBe(mainNiceness);
  });

  it('keep the priority they start with by default', async () => {
    await busy({});
    expect(celNiceness()).toEqual([mainNiceness, mainNiceness]);
  });
});
