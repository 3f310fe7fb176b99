import { describe, expect, it } from 'vitest';
import { decideAdmission, type VerifyDecision } from '../src/decide.js';
import { InvalidReferenceError } from '../src/errors.js';
import { digestPatch } from '../src/patch.js';
import { jsonPointer } from '../src/pointer.js';
import { objectOf, podSpec, requestFor } from './support/workloads.js';

const D = `sha256:${'d'.repeat(64)}`;
const E = `sha256:${'e'.repeat(64)}`;

describe('jsonPointer', () => {
  it('escapes ~ and / as RFC 6901 requires', () => {
    expect(jsonPointer(['spec', 'a/b', 'c~d', '0'])).toBe('/spec/a~1b/c~0d/0');
    expect(jsonPointer([])).toBe('');
  });
});

describe('digestPatch', () => {
  const object = objectOf('Deployment', {
    spec: podSpec(['registry.example/app:1', `registry.example/pinned@${E}`]),
  });
  const decision = decideAdmission(requestFor('Deployment', 'CREATE', object)) as VerifyDecision;

  it('pins each planned field whose digest is known, each replace guarded by a test', () => {
    const digests = new Map([
      ['spec.template.spec.containers[0].image', D],
      ['spec.template.spec.volumes[0].image.reference', E],
    ]);
    expect(digestPatch(decision, digests)).toEqual([
      { op: 'test', path: '/spec/template/spec/containers/0/image', value: 'registry.example/app:1' },
      { op: 'replace', path: '/spec/template/spec/containers/0/image', value: `registry.example/app:1@${D}` },
      { op: 'test', path: '/spec/template/spec/volumes/0/image/reference', value: 'registry.example/data:1' },
      {
        op: 'replace',
        path: '/spec/template/spec/volumes/0/image/reference',
        value: `registry.example/data:1@${E}`,
      },
    ]);
  });

  it('never touches a field outside the plan, even when a digest is offered for it', () => {
    const digests = new Map([
      ['spec.template.spec.containers[1].image', D], // already pinned: not planned
      ['metadata.name', D],
      ['spec.template.spec.containers[7].image', D],
    ]);
    expect(digestPatch(decision, digests)).toEqual([]);
  });

  it('nothing for an admitted request', () => {
    const old = objectOf('ReplicaSet', { scale: 3 });
    const admitted = decideAdmission(
      requestFor('ReplicaSet', 'UPDATE', objectOf('ReplicaSet', { scale: 1 }), old),
    );
    expect(digestPatch(admitted, new Map([['spec.template.spec.containers[0].image', D]]))).toEqual([]);
  });

  it('rejects a malformed digest', () => {
    const digests = new Map([['spec.template.spec.containers[0].image', 'sha256:nope']]);
    expect(() => digestPatch(decision, digests)).toThrow(InvalidReferenceError);
  });
});
