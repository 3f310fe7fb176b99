import { fc, test as propTest } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  AdmissionReviewError,
  admissionReviewFor,
  jsonNestingExceeds,
  parseAdmissionReview,
  parseAdmissionReviewJson,
} from '../src/index.js';
import { deeplyNestedReviewText, fixture, fixtureText } from './fixtures.js';

function errorOf(fn: () => unknown): AdmissionReviewError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AdmissionReviewError);
    return error as AdmissionReviewError;
  }
  throw new Error('expected an AdmissionReviewError, nothing was thrown');
}

function withRequest(patch: Record<string, unknown>): unknown {
  const review = fixture('pod-create.json') as { request: Record<string, unknown> };
  return { ...review, request: { ...review.request, ...patch } };
}

describe('parseAdmissionReview: real-shaped fixtures', () => {
  it('Pod CREATE', () => {
    const { request } = parseAdmissionReview(fixture('pod-create.json'));
    expect(request.operation).toBe('CREATE');
    expect(request.kind).toEqual({ group: '', version: 'v1', kind: 'Pod' });
    expect(request.resource.resource).toBe('pods');
    expect(request.namespace).toBe('test');
    expect(request.oldObject).toBeNull();
    expect(request.object?.kind).toBe('Pod');
    expect(request.userInfo.username).toBe('system:serviceaccount:kube-system:replicaset-controller');
    expect(request.dryRun).toBe(false);
    expect(request.options).toMatchObject({ kind: 'CreateOptions' });
  });

  it('ReplicaSet scale-down UPDATE from the deployment controller', () => {
    const { request } = parseAdmissionReview(fixture('replicaset-scale-down.json'));
    expect(request.operation).toBe('UPDATE');
    expect(request.name).toBe('foo-bar-7c9d8f5b4c');
    expect(request.userInfo.username).toBe('system:serviceaccount:kube-system:deployment-controller');
    const spec = (o: unknown) => (o as { spec: { replicas: number } }).spec.replicas;
    expect(spec(request.oldObject)).toBe(2);
    expect(spec(request.object)).toBe(1);
    expect(request.object?.metadata?.annotations?.['deployment.kubernetes.io/desired-replicas']).toBe('2');
  });

  it('Deployment status update keeps the subresource', () => {
    const { request } = parseAdmissionReview(fixture('deployment-status.json'));
    expect(request.subResource).toBe('status');
    expect(request.requestSubResource).toBe('status');
    expect(request.requestKind).toEqual({ group: 'apps', version: 'v1', kind: 'Deployment' });
    expect(request.requestResource).toEqual({ group: 'apps', version: 'v1', resource: 'deployments' });
  });

  it('pods/ephemeralcontainers update', () => {
    const { request } = parseAdmissionReview(fixture('pod-ephemeralcontainers.json'));
    expect(request.subResource).toBe('ephemeralcontainers');
    expect(request.userInfo.groups).toEqual(['kubeadm:cluster-admins', 'system:authenticated']);
  });

  it('CronJob CREATE', () => {
    const { request } = parseAdmissionReview(fixture('cronjob-create.json'));
    expect(request.kind.kind).toBe('CronJob');
    expect(request.resource).toEqual({ group: 'batch', version: 'v1', resource: 'cronjobs' });
  });

  it('DELETE carries only the old object', () => {
    const { request } = parseAdmissionReview(fixture('pod-delete.json'));
    expect(request.operation).toBe('DELETE');
    expect(request.object).toBeNull();
    expect(request.oldObject?.metadata?.name).toBe('foo-bar-7c9d8f5b4c-x2x9z');
  });

  it('reads the same review from raw bytes', () => {
    const bytes = new TextEncoder().encode(fixtureText('pod-create.json'));
    expect(parseAdmissionReviewJson(bytes)).toEqual(parseAdmissionReview(fixture('pod-create.json')));
  });
});

describe('parseAdmissionReview: malformed bodies name the field', () => {
  it('body that is not JSON', () => {
    const error = errorOf(() => parseAdmissionReviewJson(fixtureText('malformed-not-json.txt')));
    expect(error.message).toMatch(/^<root>: body is not valid JSON: /);
    expect(error.code).toBe('INVALID_ADMISSION_REVIEW');
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('wrong apiVersion', () => {
    const error = errorOf(() => parseAdmissionReview(fixture('malformed-wrong-api-version.json')));
    expect(error.message).toBe('apiVersion: must be "admission.k8s.io/v1", got "admission.k8s.io/v1beta1"');
    expect(error.path).toBe('apiVersion');
  });

  it('missing uid', () => {
    const error = errorOf(() => parseAdmissionReview(fixture('malformed-missing-uid.json')));
    expect(error.message).toBe('request.uid: required string');
    expect(error.uid).toBeUndefined();
  });

  it('object of the wrong type', () => {
    const error = errorOf(() => parseAdmissionReview(fixture('malformed-object-wrong-type.json')));
    expect(error.message).toBe('request.object: must be an object, got array');
    expect(error.uid).toBe('00000000-0000-4000-8000-0000000000a3');
  });

  it('object of another kind than request.kind', () => {
    const error = errorOf(() => parseAdmissionReview(fixture('malformed-object-wrong-kind.json')));
    expect(error.message).toBe('request.object.kind: must be "Pod" as in request.kind, got "Deployment"');
  });

  it('10 MB of nesting is refused before JSON.parse, quickly', () => {
    const text = deeplyNestedReviewText(5_000_000);
    expect(text.length).toBeGreaterThan(10_000_000);
    const error = errorOf(() => parseAdmissionReviewJson(text));
    expect(error.message).toBe('<root>: JSON nested deeper than 102 levels');
  });

  it('deep nesting inside an already-parsed object is refused without overflowing the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const error = errorOf(() => parseAdmissionReview(withRequest({ object: { kind: 'Pod', spec: deep } })));
    expect(error.message).toBe('request.object: nested deeper than 100 levels');
    const shallow = parseAdmissionReview(withRequest({ object: { spec: [[[[1]]]] } }), { maxDepth: 5 });
    expect(shallow.request.object).toEqual({ spec: [[[[1]]]] });
    expect(() =>
      parseAdmissionReview(withRequest({ object: { spec: [[[[{ a: 1 }]]]] } }), { maxDepth: 5 }),
    ).toThrow('nested deeper than 5 levels');
  });

  it.each([
    [null, '<root>: must be an object, got null'],
    ['text', '<root>: must be an object, got string'],
    [[], '<root>: must be an object, got array'],
    [{ apiVersion: 'admission.k8s.io/v1', kind: 'Review' }, 'kind: must be "AdmissionReview", got "Review"'],
    [{ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, 'request: required object'],
    [
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: 7 },
      'request: must be an object, got number',
    ],
    [{ apiVersion: 7, kind: 'AdmissionReview' }, 'apiVersion: must be "admission.k8s.io/v1", got number'],
  ])('envelope %#', (body, message) => {
    expect(errorOf(() => parseAdmissionReview(body)).message).toBe(message);
  });

  it.each([
    [{ uid: '' }, 'request.uid: must not be empty'],
    [{ uid: 42 }, 'request.uid: must be a string, got number'],
    [{ kind: undefined }, 'request.kind: required object'],
    [{ kind: { group: '', version: 'v1' } }, 'request.kind.kind: required string'],
    [
      { resource: { group: '', version: 'v1', resource: 5 } },
      'request.resource.resource: must be a string, got number',
    ],
    [{ resource: null }, 'request.resource: required object'],
    [
      { operation: 'PATCH' },
      'request.operation: must be one of CREATE, UPDATE, DELETE, CONNECT, got "PATCH"',
    ],
    [
      { operation: 'x'.repeat(100) },
      `request.operation: must be one of CREATE, UPDATE, DELETE, CONNECT, got "${'x'.repeat(64)}..."`,
    ],
    [{ userInfo: undefined }, 'request.userInfo: required object'],
    [{ userInfo: { groups: 'admins' } }, 'request.userInfo.groups: must be a list, got string'],
    [{ userInfo: { groups: [1] } }, 'request.userInfo.groups[0]: must be a string, got number'],
    [{ userInfo: { extra: { scopes: 'x' } } }, 'request.userInfo.extra.scopes: must be a list, got string'],
    [{ userInfo: { username: false } }, 'request.userInfo.username: must be a string, got boolean'],
    [{ object: null }, 'request.object: required object for CREATE'],
    [{ object: { kind: 'Pod', metadata: 'x' } }, 'request.object.metadata: must be an object, got string'],
    [{ operation: 'UPDATE' }, 'request.oldObject: required object for UPDATE'],
    [{ subResource: 1 }, 'request.subResource: must be a string, got number'],
    [{ dryRun: 'yes' }, 'request.dryRun: must be a boolean, got string'],
    [{ options: [] }, 'request.options: must be an object, got array'],
    [{ requestKind: 'Pod' }, 'request.requestKind: must be an object, got string'],
    [{ requestResource: { group: '', version: 'v1' } }, 'request.requestResource.resource: required string'],
  ])('request field %#', (patch, message) => {
    expect(errorOf(() => parseAdmissionReview(withRequest(patch))).message).toBe(message);
  });

  it('keeps the uid on errors found after the uid was read', () => {
    const error = errorOf(() => parseAdmissionReview(withRequest({ operation: 'PATCH' })));
    expect(error.uid).toBe('705ab4f5-6393-11e8-b7cc-42010a800002');
  });

  it('accepts optional userInfo extras and CONNECT without objects', () => {
    const review = parseAdmissionReview(
      withRequest({
        operation: 'CONNECT',
        object: null,
        userInfo: { extra: { scopes: ['a', 'b'] }, uid: 'u' },
      }),
    );
    expect(review.request.userInfo).toEqual({ extra: { scopes: ['a', 'b'] }, uid: 'u' });
  });

  it('wraps an unexpected exception in its own error type, keeping the cause', () => {
    const hostile = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      get request(): never {
        throw new RangeError('boom');
      },
    };
    const error = errorOf(() => parseAdmissionReview(hostile));
    expect(error.message).toBe('<root>: unreadable review: RangeError: boom');
    expect(error.cause).toBeInstanceOf(RangeError);
  });

  propTest.prop([fc.jsonValue()], { numRuns: 300 })(
    'never throws anything but AdmissionReviewError',
    (value) => {
      try {
        parseAdmissionReview(value);
      } catch (error) {
        expect(error).toBeInstanceOf(AdmissionReviewError);
      }
    },
  );

  propTest.prop(
    [
      fc.record({
        uid: fc.oneof(fc.string(), fc.integer()),
        operation: fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT', 'PATCH'),
        object: fc.oneof(fc.constant(null), fc.jsonValue()),
        oldObject: fc.oneof(fc.constant(null), fc.jsonValue()),
        userInfo: fc.jsonValue(),
      }),
    ],
    { numRuns: 300 },
  )('mutated requests either parse or fail with a field path', (patch) => {
    try {
      const review = parseAdmissionReview(withRequest(patch));
      expect(review.request.uid).toBe(patch.uid);
    } catch (error) {
      expect(error).toBeInstanceOf(AdmissionReviewError);
      expect((error as AdmissionReviewError).path).toMatch(/^request\./);
    }
  });
});

describe('jsonNestingExceeds', () => {
  it('ignores brackets inside strings and escaped quotes', () => {
    expect(jsonNestingExceeds('{"a":"[[[[[[\\"[[[["}', 1)).toBe(false);
    expect(jsonNestingExceeds('[[1]]', 1)).toBe(true);
    expect(jsonNestingExceeds('[[1]]', 2)).toBe(false);
  });
});

describe('admissionReviewFor', () => {
  it('wraps a response in the v1 envelope', () => {
    expect(admissionReviewFor({ uid: 'u1', allowed: true })).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u1', allowed: true },
    });
  });
});
