// `pnpm bench` (vitest bench --run): medians go into the README. A measurement, not a timed
// test: nothing here fails on speed.
import { test } from 'vitest';
import { loadRequest, objectOf, podSpec, requestFor } from '../test/support/workloads.js';

// Times the built package, which is what production runs (turbo's bench task builds it first).
// The specifier is a variable so that typechecking does not need a build.
const built = '../dist/index.js';
const { decideAdmission }: typeof import('../src/index.js') = await import(/* @vite-ignore */ built);

const scaleDown = loadRequest('replicaset-scale-down.json');
const templateChange = loadRequest('deployment-rollout-undo.json');
const images = Array.from({ length: 50 }, (_, i) => `registry.example:5000/team/service-${i}:v1.${i}`);
const bigPod = requestFor('Pod', 'CREATE', objectOf('Pod', { spec: podSpec(images) }));

const cases = [
  ['ReplicaSet scale-down UPDATE (two ~5 KB objects)', scaleDown, 'scale-down'],
  ['Deployment template change UPDATE (two ~5 KB objects)', templateChange, 'template-changed'],
  ['Pod CREATE with 50 containers', bigPod, 'create'],
] as const;

for (const [name, request, rule] of cases) {
  test(`decideAdmission: ${name}`, async ({ bench, expect }) => {
    expect(decideAdmission(request).rule).toBe(rule);
    let sink = 0;
    const result = await bench(name, () => {
      sink += decideAdmission(request).rule.length;
    }).run();
    expect(sink).toBeGreaterThan(0);
    console.log(`${name}: median ${(result.latency.p50 * 1000).toFixed(2)} µs`);
  });
}
