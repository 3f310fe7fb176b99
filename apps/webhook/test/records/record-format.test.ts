// Verification records as stored objects (issue 24): a record Signet signed reads back; one signed
// under another key, edited, copied under another name or into another namespace, or that does not
// parse, is refused, and reading never throws, whatever the object holds.
import { randomBytes } from 'node:crypto';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  type RecordFields,
  type RecordObject,
  readRecord,
  recordName,
  signedRecord,
} from '../../src/records/record-format.js';
import { keyId } from '../../src/records/record-key.js';

const KEY = randomBytes(32);
const OTHER_KEY = randomBytes(32);
const NS = 'signet-system';
const DIGEST = `sha256:${'a'.repeat(64)}`;
const FIELDS: RecordFields = {
  image: `registry.example/team/app@${DIGEST}`,
  policy: 'release',
  fingerprint: `sha256:${'f'.repeat(64)}`,
  signers: [
    { authority: 'release-key', type: 'key', key: 'release-key', fingerprint: 'sha256:0dce85b4' },
    { authority: 'ci', type: 'keyless', issuer: 'https://issuer.example', subject: 'ci@example.com' },
    { authority: 'allow', type: 'static' },
  ],
  verifiedAt: Date.parse('2026-12-05T10:00:00.123Z'),
  verifiedBy: 'signet-webhook-7c9d-abcde',
};

type Mutable = { metadata: Record<string, unknown>; spec: Record<string, unknown> };
const signed = () => structuredClone(signedRecord(KEY, NS, FIELDS)) as unknown as Mutable;
const read = (object: unknown, key = KEY, namespace = NS) =>
  readRecord(key, namespace, object as RecordObject);

describe('verification record objects', () => {
  it('a record Signet signed reads back as it was written, under a name derived from what it is about', () => {
    const object = signed();
    expect(object.metadata.name).toBe(recordName('release', FIELDS.fingerprint, FIELDS.image));
    expect(object.metadata.name).toMatch(/^vr-[0-9a-f]{40}$/);
    expect(object.spec.verifiedAt).toBe('2026-12-05T10:00:00.123Z');
    expect(read(object)).toEqual({ ok: true, name: object.metadata.name, fields: FIELDS });
  });

  it('never holds the key, nor anything a key id says about it', () => {
    const text = JSON.stringify(signed());
    expect(text).not.toContain(KEY.toString('hex'));
    expect(text).not.toContain(KEY.toString('base64'));
    expect(keyId(KEY)).toMatch(/^[0-9a-f]{12}$/);
    expect(keyId(KEY)).not.toBe(keyId(OTHER_KEY));
  });

  it('refuses a record signed under another key (written by anyone else)', () => {
    expect(read(signed(), OTHER_KEY)).toMatchObject({ ok: false, rejection: 'hmac' });
    const forged = signedRecord(OTHER_KEY, NS, FIELDS);
    expect(read(forged)).toMatchObject({ ok: false, rejection: 'hmac' });
  });

  const edits: [string, (o: Mutable) => void][] = [
    ['another digest', (o) => (o.spec.image = `registry.example/team/app@sha256:${'b'.repeat(64)}`)],
    ['another repository', (o) => (o.spec.image = `registry.example/team/other@${DIGEST}`)],
    ['another policy', (o) => (o.spec.policy = 'other')],
    ["another policy's fingerprint", (o) => (o.spec.fingerprint = `sha256:${'e'.repeat(64)}`)],
    ['a later time (a record made younger)', (o) => (o.spec.verifiedAt = '2026-12-06T10:00:00.123Z')],
    ['another replica', (o) => (o.spec.verifiedBy = 'someone')],
    [
      'another signer',
      (o) =>
        ((o.spec.signers as { subject?: string }[])[1] = {
          ...(o.spec.signers as object[])[1],
          subject: 'evil@example.com',
        }),
    ],
    ['a signer removed', (o) => (o.spec.signers = (o.spec.signers as unknown[]).slice(0, 2))],
    [
      'the same record copied under another name',
      (o) =>
        (o.metadata.name = recordName(
          'release',
          FIELDS.fingerprint,
          `registry.example/team/app@sha256:${'c'.repeat(64)}`,
        )),
    ],
  ];
  for (const [what, edit] of edits) {
    it(`refuses an edited record: ${what}`, () => {
      const object = signed();
      edit(object);
      expect(read(object)).toMatchObject({ ok: false, rejection: 'hmac' });
    });
  }

  it('refuses a record copied into another namespace, under any namespace it claims', () => {
    expect(read(signed(), KEY, 'elsewhere')).toMatchObject({ ok: false });
    const moved = signed();
    moved.metadata.namespace = 'elsewhere';
    expect(read(moved, KEY, 'elsewhere')).toMatchObject({ ok: false, rejection: 'hmac' });
  });

  const unparseable: [string, (o: Mutable) => void][] = [
    ['a tag instead of a digest', (o) => (o.spec.image = 'registry.example/team/app:v1')],
    ['a digest that is not sha256 hex', (o) => (o.spec.image = 'registry.example/team/app@sha256:xyz')],
    ['no policy', (o) => delete o.spec.policy],
    ['a fingerprint that is not sha256 hex', (o) => (o.spec.fingerprint = 'sha256:zz')],
    ['a time that is not a time', (o) => (o.spec.verifiedAt = 'yesterday')],
    ['a number for a time', (o) => (o.spec.verifiedAt = 1_800_000_000_000)],
    ['a signer of an unknown type', (o) => (o.spec.signers = [{ authority: 'a', type: 'magic' }])],
    [
      'too many signers',
      (o) => (o.spec.signers = Array.from({ length: 17 }, () => ({ authority: 'a', type: 'static' }))),
    ],
    ['an oversized image', (o) => (o.spec.image = `${'r'.repeat(4100)}@${DIGEST}`)],
    ['no hmac', (o) => delete o.spec.hmac],
    ['an hmac that is not hex', (o) => (o.spec.hmac = 'not-hex')],
    ['no spec', (o) => delete (o as Partial<Mutable>).spec],
    ['no name', (o) => delete o.metadata.name],
  ];
  for (const [what, edit] of unparseable) {
    it(`refuses what does not parse: ${what}`, () => {
      const object = signed();
      edit(object);
      expect(read(object)).toMatchObject({ ok: false, rejection: 'unparseable' });
    });
  }

  test.prop([fc.anything(), fc.anything()], { numRuns: 500 })(
    'never throws and never accepts an object that was not signed (arbitrary JSON)',
    (spec, metadata) => {
      const object = { metadata: { name: 'vr-x', ...(typeof metadata === 'object' ? metadata : {}) }, spec };
      const result = read(object);
      expect(result.ok).toBe(false);
    },
  );

  test.prop(
    [fc.record({ image: fc.string(), policy: fc.string(), verifiedAt: fc.anything(), hmac: fc.string() })],
    {
      numRuns: 500,
    },
  )('a signed record with any field replaced is refused', (replacement) => {
    for (const [field, value] of Object.entries(replacement)) {
      const object = signed();
      if (JSON.stringify(object.spec[field]) === JSON.stringify(value)) continue;
      object.spec[field] = value;
      expect(read(object).ok).toBe(false);
    }
  });
});
