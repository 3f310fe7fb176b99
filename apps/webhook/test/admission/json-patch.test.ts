import { describe, expect, it } from 'vitest';
import { applyPatch } from '../../src/admission/json-patch.js';

const encode = (ops: unknown) => Buffer.from(JSON.stringify(ops)).toString('base64');
const pod = {
  kind: 'Pod',
  spec: { containers: [{ name: 'a', image: 'app:v1' }], 'odd/key~': { image: 'x' } },
};

describe('applyPatch', () => {
  it('applies guarded replacements without touching the original', () => {
    const patched = applyPatch(
      pod,
      encode([
        { op: 'test', path: '/spec/containers/0/image', value: 'app:v1' },
        { op: 'replace', path: '/spec/containers/0/image', value: 'app:v1@sha256:aa' },
        { op: 'replace', path: '/spec/odd~1key~0/image', value: 'y' },
      ]),
    );
    expect(patched.spec).toEqual({
      containers: [{ name: 'a', image: 'app:v1@sha256:aa' }],
      'odd/key~': { image: 'y' },
    });
    expect(pod.spec.containers[0]?.image).toBe('app:v1');
  });

  it('fails a test that does not hold, a missing path and unknown operations', () => {
    expect(() =>
      applyPatch(pod, encode([{ op: 'test', path: '/spec/containers/0/image', value: 'b' }])),
    ).toThrow('patch test failed at /spec/containers/0/image');
    expect(() => applyPatch(pod, encode([{ op: 'replace', path: '/nope/x', value: 'b' }]))).toThrow(
      'does not exist',
    );
    expect(() => applyPatch(pod, encode([{ op: 'remove', path: '/spec' }]))).toThrow(
      'unexpected patch operation remove',
    );
  });
});
