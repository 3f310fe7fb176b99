// Writes that start Pods without changing the template or raising the scale (issue 24, item 4):
// each verifies on a top-level workload (row 6, `top-level-start`) and is admitted with a warning
// when the workload's controller makes it (row 5, `owned-start`). Their reverse (pausing,
// suspending, a higher partition, OnDelete) starts nothing and stays admitted unverified (row 4).
import { WORKLOADS, type WorkloadKind } from '@signet/k8s-types';
import { describe, expect, it } from 'vitest';
import { type AdmissionDecision, decideAdmission, type VerifyDecision } from '../src/decide.js';
import { edited, getAt, type Json, objectOf, setAt, update } from './support/workloads.js';

interface Transition {
  readonly name: string;
  readonly kind: WorkloadKind;
  readonly before: (o: Json) => void;
  readonly after: (o: Json) => void;
  /** What the decision (and the owned-start warning) says changed. */
  readonly change: string;
}

const set =
  (path: readonly string[], value: unknown) =>
  (o: Json): void => {
    setAt(o, [...path], value);
  };
const unset =
  (path: readonly string[]) =>
  (o: Json): void => {
    const parent = getAt(o, path.slice(0, -1)) as Json | undefined;
    if (parent) delete parent[path[path.length - 1] as string];
  };
const none = () => undefined;

const PAUSED = ['spec', 'paused'];
const SUSPEND = ['spec', 'suspend'];
const PARTITION = ['spec', 'updateStrategy', 'rollingUpdate', 'partition'];
const ORDINALS = ['spec', 'ordinals', 'start'];
const STRATEGY = ['spec', 'updateStrategy', 'type'];

const STARTS: readonly Transition[] = [
  {
    name: 'a paused Deployment resumed (kubectl rollout resume)',
    kind: 'Deployment',
    before: set(PAUSED, true),
    after: set(PAUSED, false),
    change: 'spec.paused true -> false',
  },
  {
    name: 'a paused Deployment resumed by removing the field',
    kind: 'Deployment',
    before: set(PAUSED, true),
    after: unset(PAUSED),
    change: 'spec.paused true -> (unset)',
  },
  {
    name: 'a suspended Job resumed',
    kind: 'Job',
    before: set(SUSPEND, true),
    after: set(SUSPEND, false),
    change: 'spec.suspend true -> false',
  },
  {
    name: 'a suspended CronJob re-enabled',
    kind: 'CronJob',
    before: set(SUSPEND, true),
    after: set(SUSPEND, false),
    change: 'spec.suspend true -> false',
  },
  {
    name: "a StatefulSet's partition lowered (staged rollout released)",
    kind: 'StatefulSet',
    before: set(PARTITION, 3),
    after: set(PARTITION, 1),
    change: 'spec.updateStrategy.rollingUpdate.partition 3 -> 1',
  },
  {
    name: "a StatefulSet's partition removed (defaults to 0)",
    kind: 'StatefulSet',
    before: set(PARTITION, 2),
    after: unset(PARTITION),
    change: 'spec.updateStrategy.rollingUpdate.partition 2 -> (unset)',
  },
  {
    name: "a StatefulSet's first ordinal moved (Pods with new ordinals)",
    kind: 'StatefulSet',
    before: set(ORDINALS, 0),
    after: set(ORDINALS, 5),
    change: 'spec.ordinals.start 0 -> 5',
  },
  {
    name: 'a StatefulSet from OnDelete to RollingUpdate',
    kind: 'StatefulSet',
    before: set(STRATEGY, 'OnDelete'),
    after: set(STRATEGY, 'RollingUpdate'),
    change: 'spec.updateStrategy.type "OnDelete" -> "RollingUpdate"',
  },
  {
    name: 'a DaemonSet from OnDelete to RollingUpdate',
    kind: 'DaemonSet',
    before: set(STRATEGY, 'OnDelete'),
    after: set(STRATEGY, 'RollingUpdate'),
    change: 'spec.updateStrategy.type "OnDelete" -> "RollingUpdate"',
  },
];

/** The reverse writes, and others that only pace or stop Pods: row 4, nothing verified. */
const STARTS_NOTHING: readonly Transition[] = [
  { name: 'a Deployment paused', kind: 'Deployment', before: none, after: set(PAUSED, true), change: '' },
  {
    name: 'a paused Deployment edited while paused',
    kind: 'Deployment',
    before: set(PAUSED, true),
    after: (o) => {
      set(PAUSED, true)(o);
      set(['spec', 'minReadySeconds'], 10)(o);
    },
    change: '',
  },
  { name: 'a Job suspended', kind: 'Job', before: none, after: set(SUSPEND, true), change: '' },
  { name: 'a CronJob suspended', kind: 'CronJob', before: none, after: set(SUSPEND, true), change: '' },
  {
    name: "a StatefulSet's partition raised (rollout staged)",
    kind: 'StatefulSet',
    before: set(PARTITION, 1),
    after: set(PARTITION, 3),
    change: '',
  },
  {
    name: 'a StatefulSet from RollingUpdate to OnDelete',
    kind: 'StatefulSet',
    before: set(STRATEGY, 'RollingUpdate'),
    after: set(STRATEGY, 'OnDelete'),
    change: '',
  },
  {
    name: 'a DaemonSet from RollingUpdate to OnDelete',
    kind: 'DaemonSet',
    before: none,
    after: set(STRATEGY, 'OnDelete'),
    change: '',
  },
];

function transition(t: Transition, options: { controller?: boolean; scale?: [number, number] } = {}) {
  const [from, to] = options.scale ?? [2, 2];
  const controller = options.controller === true;
  const old = edited(objectOf(t.kind, { scale: from, controller }), t.before);
  const object = edited(objectOf(t.kind, { scale: to, controller }), t.after);
  return decideAdmission(update(t.kind, old, object));
}

function expectVerify(decision: AdmissionDecision): VerifyDecision {
  expect(decision.action).toBe('verify');
  return decision as VerifyDecision;
}

describe('row 6: a write that starts Pods on a top-level workload verifies every image', () => {
  for (const t of STARTS) {
    it(t.name, () => {
      const decision = expectVerify(transition(t));
      expect(decision.rule).toBe('top-level-start');
      expect(decision.images.map((i) => i.path)).toContain(
        t.kind === 'CronJob'
          ? 'spec.jobTemplate.spec.template.spec.containers[0].image'
          : 'spec.template.spec.containers[0].image',
      );
      // The template is unchanged: pinning it would start a rollout.
      expect(decision.mutations).toEqual([]);
    });
  }

  it('resumed and scaled down in one write: still verified (the resume starts Pods)', () => {
    const resume = STARTS[0] as Transition;
    expect(transition(resume, { scale: [3, 1] }).rule).toBe('top-level-start');
  });

  it('resumed and scaled up in one write: verified as the scale-up', () => {
    const resume = STARTS[0] as Transition;
    expect(transition(resume, { scale: [1, 3] }).rule).toBe('top-level-scale-up');
  });

  it('a changed template still wins (row 7)', () => {
    const resume = STARTS[0] as Transition;
    const old = edited(objectOf('Deployment'), resume.before);
    const object = edited(objectOf('Deployment'), (o) => {
      resume.after(o);
      setAt(o, ['spec', 'template', 'spec', 'containers', '0', 'image'], 'registry.example/app:2');
    });
    expect(decideAdmission(update('Deployment', old, object)).rule).toBe('template-changed');
  });
});

describe('row 5: the same write by a controller owner is admitted with a warning', () => {
  for (const t of STARTS) {
    it(t.name, () => {
      const decision = transition(t, { controller: true });
      expect(decision).toEqual({
        action: 'admit',
        rule: 'owned-start',
        warning:
          `${t.kind} shop/${t.kind.toLowerCase()}-a: ${t.change} by its controller Owner/owner-a; ` +
          'admitted without verifying images, each new Pod is verified when it is created',
      });
    });
  }
});

describe('row 4: writes that start no Pod stay admitted without verification', () => {
  for (const t of STARTS_NOTHING) {
    for (const controller of [false, true]) {
      it(`${t.name}${controller ? ' (by a controller owner)' : ''}`, () => {
        expect(transition(t, { controller })).toEqual({ action: 'admit', rule: 'template-unchanged' });
        const lowered = WORKLOADS[t.kind].scalePath === null ? 'template-unchanged' : 'scale-down';
        expect(transition(t, { controller, scale: [3, 1] })).toEqual({ action: 'admit', rule: lowered });
      });
    }
  }
});
