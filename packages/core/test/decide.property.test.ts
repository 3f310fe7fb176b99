// Properties of the decision table over generated workloads of every kind.
import { fc, test } from '@fast-check/vitest';
import { imagesOf, type KubeObject, podTemplateOf, WORKLOADS, type WorkloadKind } from '@signet/k8s-types';
import { describe, expect } from 'vitest';
import { type AdmissionDecision, decideAdmission } from '../src/decide.js';
import { semanticEqual } from '../src/equality.js';
import {
  applyOtherEdits,
  build,
  changeTemplate,
  otherEditsArb,
  partsArb,
  templateChangeArb,
  type WorkloadParts,
} from './support/arbitraries.js';
import { reshape } from './support/reshape.js';
import { ALL_KINDS, getAt, type Json, TEMPLATE_KINDS, update } from './support/workloads.js';

const RUNS = { numRuns: 200 };
const templateKindArb = fc.constantFrom(...TEMPLATE_KINDS);
const kindArb = fc.constantFrom(...ALL_KINDS);
const seedArb = fc.integer();

/** `[path, image]` of every image of the object's pod spec. */
function imagesOfObject(kind: WorkloadKind, object: KubeObject): [string, string][] {
  const info = WORKLOADS[kind];
  return imagesOf(getAt(object, info.podSpecPath), info.podSpecPath.join('.')).map((i) => [i.path, i.image]);
}

function verifiedPairs(decision: AdmissionDecision): [string, string][] {
  return decision.action === 'verify' ? decision.images.map((t) => [t.path, t.image]) : [];
}

/** The new object with its template (or, for a Pod, its whole self) respelled. */
function respelled(kind: WorkloadKind, object: KubeObject, seed: number): KubeObject {
  const path = WORKLOADS[kind].templatePath;
  if (path === null) return reshape(object, seed);
  const copy = structuredClone(object) as Json;
  const parent = getAt(copy, path.slice(0, -1)) as Json;
  parent[path[path.length - 1] as string] = reshape(getAt(copy, path), seed);
  return copy as KubeObject;
}

describe('(a) template semantically equal and scale not raised: admitted without verification', () => {
  test.prop([kindArb, partsArb, otherEditsArb, seedArb], RUNS)(
    'whatever else changes (labels, annotations, owners, finalizers, status, other spec fields)',
    (kind, parts, edits, seed) => {
      const old = build(kind, parts);
      const object = respelled(kind, applyOtherEdits(kind, parts, edits), seed);
      const decision = decideAdmission(update(kind, old, object));
      expect(decision.action).toBe('admit');
      const expected = kind === 'Pod' ? ['pod-images-unchanged'] : ['scale-down', 'template-unchanged'];
      expect(expected).toContain(decision.rule);
    },
  );
});

describe('(b) template changed, or scale raised on a top-level workload: every image of the new template', () => {
  test.prop([templateKindArb, partsArb, templateChangeArb, fc.nat(), fc.nat(4), seedArb], RUNS)(
    'template changed, whatever happens to the scale',
    (kind, parts, change, pick, scaleDrop, seed) => {
      const old = build(kind, parts);
      const changed = changeTemplate(parts, change, pick);
      const object = respelled(
        kind,
        build(kind, { ...changed, scale: Math.max(0, parts.scale - scaleDrop) }),
        seed,
      );
      const decision = decideAdmission(update(kind, old, object));
      expect(decision.rule).toBe('template-changed');
      expect(verifiedPairs(decision)).toEqual(imagesOfObject(kind, object));
    },
  );

  const scaledKindArb = fc.constantFrom(
    ...TEMPLATE_KINDS.filter((kind) => WORKLOADS[kind].scalePath !== null),
  );
  test.prop([scaledKindArb, partsArb, fc.integer({ min: 1, max: 5 }), seedArb], RUNS)(
    'scale raised on a workload without a controller owner',
    (kind, parts, raise, seed) => {
      const top: WorkloadParts = { ...parts, controller: false };
      const old = build(kind, top);
      const object = respelled(kind, build(kind, { ...top, scale: top.scale + raise }), seed);
      const decision = decideAdmission(update(kind, old, object));
      expect(decision.rule).toBe('top-level-scale-up');
      expect(verifiedPairs(decision)).toEqual(imagesOfObject(kind, object));
    },
  );

  test.prop([partsArb, fc.nat(), seedArb], RUNS)(
    'a Pod whose image changes: exactly the changed image',
    (parts, pick, seed) => {
      const old = build('Pod', parts);
      const object = respelled('Pod', build('Pod', changeTemplate(parts, 'image', pick)), seed);
      const decision = decideAdmission(update('Pod', old, object));
      const index = pick % (parts.spec.containers as unknown[]).length;
      expect(decision.rule).toBe('pod-images-changed');
      expect(verifiedPairs(decision).map(([path]) => path)).toEqual([`spec.containers[${index}].image`]);
    },
  );
});

/** Any UPDATE a generator can make: other edits, maybe a template change, maybe a scale raise. */
const anyUpdateArb = fc.record({
  kind: kindArb,
  parts: partsArb,
  edits: otherEditsArb,
  change: fc.option(templateChangeArb),
  pick: fc.nat(),
  raise: fc.nat(3),
  seed: seedArb,
});

function anyUpdate(input: typeof anyUpdateArb extends fc.Arbitrary<infer T> ? T : never) {
  const { kind, parts, edits, change, pick, raise, seed } = input;
  const old = build(kind, parts);
  const changed = change === null ? parts : changeTemplate(parts, change, pick);
  const edited = applyOtherEdits(kind, { ...changed, scale: changed.scale + raise + edits.scaleDrop }, edits);
  return { kind, old, object: respelled(kind, edited, seed) };
}

describe('(c) the mutation plan never includes a field of an unchanged template', () => {
  test.prop([anyUpdateArb], { numRuns: 400 })('for any UPDATE of any kind', (input) => {
    const { kind, old, object } = anyUpdate(input);
    const decision = decideAdmission(update(kind, old, object));
    if (decision.action !== 'verify') return;
    const info = WORKLOADS[kind];
    if (info.templatePath !== null) {
      expect(
        semanticEqual(podTemplateOf(info, old), podTemplateOf(info, object)) && decision.mutations.length > 0,
      ).toBe(false);
    } else {
      const before = new Map(imagesOfObject(kind, old));
      for (const target of decision.mutations) expect(before.get(target.path)).not.toBe(target.image);
    }
    for (const target of decision.mutations) {
      expect(decision.images).toContainEqual(target);
      expect(target.image).not.toContain('@');
    }
  });
});

describe('(d) decisions do not depend on JSON key order or on missing-vs-empty values', () => {
  test.prop([anyUpdateArb, seedArb, seedArb], { numRuns: 400 })('UPDATE', (input, seedOld, seedNew) => {
    const { kind, old, object } = anyUpdate(input);
    const decision = decideAdmission(update(kind, old, object));
    expect(decideAdmission(update(kind, reshape(old, seedOld), reshape(object, seedNew)))).toEqual(decision);
  });

  test.prop([kindArb, partsArb, seedArb])('CREATE', (kind, parts, seed) => {
    const object = build(kind, parts);
    const create = (o: KubeObject) =>
      decideAdmission({ ...update(kind, o, o), operation: 'CREATE', oldObject: null });
    expect(create(reshape(object, seed))).toEqual(create(object));
  });
});
