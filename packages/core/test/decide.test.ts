// The contract's validating decision table: every row, for every workload kind it applies to.
import { imagesOf, type KubeObject, ObjectShapeError, WORKLOADS, type WorkloadKind } from '@signet/k8s-types';
import { describe, expect, it } from 'vitest';
import { type AdmissionDecision, decideAdmission, type VerifyDecision } from '../src/decide.js';
import {
  ALL_KINDS,
  edited,
  getAt,
  type Json,
  NO_SCALE_KINDS,
  objectOf,
  podSpec,
  requestFor,
  SCALE_KINDS,
  setAt,
  TEMPLATE_KINDS,
  update,
} from './support/workloads.js';

function expectVerify(decision: AdmissionDecision): VerifyDecision {
  expect(decision.action).toBe('verify');
  return decision as VerifyDecision;
}

/** `[path, image]` of every image of the object's pod spec. */
function allImagesOf(kind: WorkloadKind, object: KubeObject): [string, string][] {
  const info = WORKLOADS[kind];
  return imagesOf(getAt(object, info.podSpecPath), info.podSpecPath.join('.')).map((i) => [i.path, i.image]);
}

function pairs(decision: VerifyDecision, list: 'images' | 'mutations' = 'images'): [string, string][] {
  return decision[list].map((target) => [target.path, target.image]);
}

const SIGNED = 'registry.example/app@sha256:5f1c9c6b0e8f4a3d2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c';

describe('row 1: UPDATE of an object being deleted is admitted without verification', () => {
  for (const kind of ALL_KINDS) {
    for (const side of ['old', 'new'] as const) {
      it(`${kind}: deletionTimestamp on the ${side} object, even with a changed template`, () => {
        const old = objectOf(kind, { deleting: side === 'old' });
        const object = objectOf(kind, { deleting: side === 'new', spec: podSpec(['evil/unsigned:1']) });
        expect(decideAdmission(update(kind, old, object))).toEqual({
          action: 'admit',
          rule: 'being-deleted',
        });
      });
    }
  }

  it('a null deletionTimestamp is not a deletion', () => {
    const old = edited(objectOf('Pod'), (o) => setAt(o, ['metadata', 'deletionTimestamp'], null));
    const object = objectOf('Pod', { spec: podSpec(['evil/unsigned:1', 'registry.example/sidecar:1']) });
    expect(decideAdmission(update('Pod', old, object)).action).toBe('verify');
  });
});

describe('row 2: UPDATE on a status or scale subresource is admitted', () => {
  for (const kind of ALL_KINDS) {
    it(`${kind}/status, even when the object's template differs`, () => {
      const request = update(
        kind,
        objectOf(kind),
        objectOf(kind, { spec: podSpec(['evil/unsigned:1']) }),
        'status',
      );
      expect(decideAdmission(request)).toEqual({ action: 'admit', rule: 'status-or-scale-subresource' });
    });
  }
  for (const kind of SCALE_KINDS) {
    it(`${kind}/scale`, () => {
      const request = update(kind, objectOf(kind, { scale: 1 }), objectOf(kind, { scale: 9 }), 'scale');
      expect(decideAdmission(request)).toEqual({ action: 'admit', rule: 'status-or-scale-subresource' });
    });
  }
  it('a /scale request carries an autoscaling/v1 Scale, which is admitted before its kind is looked at', () => {
    const request = {
      ...update('Deployment', objectOf('Deployment'), objectOf('Deployment'), 'scale'),
      kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
    };
    expect(decideAdmission(request).rule).toBe('status-or-scale-subresource');
  });
});

describe('row 3: CREATE of any covered kind verifies every image of the pod spec', () => {
  for (const kind of ALL_KINDS) {
    it(kind, () => {
      const object = objectOf(kind, {
        spec: podSpec(['alpine', SIGNED], { ephemeralContainers: [{ name: 'dbg', image: 'busybox' }] }),
      });
      const decision = expectVerify(decideAdmission(requestFor(kind, 'CREATE', object)));
      expect(decision.rule).toBe('create');
      expect(pairs(decision)).toEqual(allImagesOf(kind, object));
      expect(pairs(decision).length).toBe(5);
      // Digest-pinned images need no rewrite; the rest may be pinned.
      expect(pairs(decision, 'mutations')).toEqual(
        allImagesOf(kind, object).filter(([, image]) => image !== SIGNED),
      );
    });
  }

  it('pods created by a controller are verified too: Pods are the enforcement point', () => {
    const pod = objectOf('Pod', { controller: true });
    expect(decideAdmission(requestFor('Pod', 'CREATE', pod)).rule).toBe('create');
  });

  it('JSON pointers name each field for the patch, volumes included', () => {
    const decision = expectVerify(decideAdmission(requestFor('CronJob', 'CREATE', objectOf('CronJob'))));
    expect(decision.images.map((target) => target.pointer)).toEqual([
      '/spec/jobTemplate/spec/template/spec/containers/0/image',
      '/spec/jobTemplate/spec/template/spec/containers/1/image',
      '/spec/jobTemplate/spec/template/spec/initContainers/0/image',
      '/spec/jobTemplate/spec/template/spec/volumes/0/image/reference',
    ]);
  });

  it('digest pinning can be switched off globally', () => {
    const decision = decideAdmission(requestFor('Pod', 'CREATE', objectOf('Pod')), { resolveDigests: false });
    expect(expectVerify(decision).mutations).toEqual([]);
    expect(expectVerify(decision).images.length).toBe(4);
  });
});

describe('row 4: template equal, scale not increased: admitted without verification', () => {
  for (const kind of SCALE_KINDS) {
    it(`${kind}: scale lowered, with labels, annotations, ownerReferences and finalizers changed`, () => {
      const old = objectOf(kind, { scale: 3 });
      const object = edited(objectOf(kind, { scale: 2, controller: true, labels: { app: 'b' } }), (o) => {
        setAt(o, ['metadata', 'annotations'], { 'deployment.kubernetes.io/desired-replicas': '2' });
        setAt(o, ['metadata', 'finalizers'], ['example.com/hold']);
        setAt(o, ['status'], { replicas: 3 });
      });
      expect(decideAdmission(update(kind, old, object))).toEqual({ action: 'admit', rule: 'scale-down' });
    });
    it(`${kind}: same scale, only annotations changed`, () => {
      const old = objectOf(kind, { annotations: { 'deployment.kubernetes.io/max-replicas': '4' } });
      const object = objectOf(kind, { annotations: { 'deployment.kubernetes.io/max-replicas': '7' } });
      expect(decideAdmission(update(kind, old, object))).toEqual({
        action: 'admit',
        rule: 'template-unchanged',
      });
    });
  }
  for (const kind of NO_SCALE_KINDS) {
    it(`${kind} (no scale field): other spec fields changed`, () => {
      const old = objectOf(kind);
      const object = edited(old, (o) => {
        setAt(
          o,
          ['spec', kind === 'CronJob' ? 'suspend' : 'minReadySeconds'],
          kind === 'CronJob' ? true : 30,
        );
      });
      expect(decideAdmission(update(kind, old, object))).toEqual({
        action: 'admit',
        rule: 'template-unchanged',
      });
    });
  }
  it('Deployment: paused and strategy changes', () => {
    const old = objectOf('Deployment');
    const object = edited(old, (o) => {
      setAt(o, ['spec', 'paused'], true);
      setAt(o, ['spec', 'strategy'], { type: 'Recreate' });
    });
    expect(decideAdmission(update('Deployment', old, object)).rule).toBe('template-unchanged');
  });
  it('a template that only differs in key order, nulls and empty lists is equal', () => {
    const old = objectOf('StatefulSet');
    const object = edited(old, (o) => {
      const template = o.spec as Json;
      const t = template.template as Json;
      template.template = {
        spec: { ...(t.spec as Json), nodeSelector: {}, tolerations: null },
        metadata: { ...(t.metadata as Json), annotations: {} },
      };
    });
    expect(decideAdmission(update('StatefulSet', old, object)).rule).toBe('template-unchanged');
  });
  it('a missing scale counts as the Kubernetes default of 1', () => {
    const missing = edited(objectOf('ReplicaSet', { scale: 2 }), (o) => delete (o.spec as Json).replicas);
    const object = objectOf('ReplicaSet', { scale: 1 });
    expect(decideAdmission(update('ReplicaSet', object, missing)).rule).toBe('template-unchanged');
    expect(decideAdmission(update('ReplicaSet', objectOf('ReplicaSet', { scale: 2 }), missing)).rule).toBe(
      'scale-down',
    );
    expect(decideAdmission(update('ReplicaSet', missing, object)).rule).toBe('template-unchanged');
    expect(decideAdmission(update('ReplicaSet', missing, objectOf('ReplicaSet', { scale: 0 }))).rule).toBe(
      'scale-down',
    );
  });
});

describe('row 5: template equal, scale raised by a controller owner: admitted with a warning', () => {
  for (const kind of SCALE_KINDS) {
    it(kind, () => {
      const old = objectOf(kind, { scale: 1, controller: true });
      const object = objectOf(kind, { scale: 2, controller: true });
      const decision = decideAdmission(update(kind, old, object));
      const path = WORKLOADS[kind].scalePath?.join('.');
      expect(decision).toEqual({
        action: 'admit',
        rule: 'owned-scale-up',
        warning:
          `${kind} shop/${kind.toLowerCase()}-a: ${path} raised from 1 to 2 by its controller Owner/owner-a; ` +
          'admitted without verifying images, each new Pod is verified when it is created',
      });
    });
  }
  it('the warning names the object by whatever metadata it has', () => {
    const strip = (o: Json) => delete o.metadata;
    const old = edited(objectOf('ReplicaSet', { scale: 1, controller: true }), strip);
    const object = edited(objectOf('ReplicaSet', { scale: 2, controller: true }), (o) => {
      o.metadata = { ownerReferences: (o.metadata as Json).ownerReferences };
    });
    expect(decideAdmission(update('ReplicaSet', old, object))).toMatchObject({
      warning: expect.stringMatching(
        /^ReplicaSet : spec.replicas raised from 1 to 2 by its controller Owner\/owner-a;/,
      ),
    });
  });
});

describe('row 6: template equal, scale raised on a top-level workload: verify every image', () => {
  for (const kind of SCALE_KINDS) {
    it(kind, () => {
      const old = objectOf(kind, { scale: 1 });
      const object = objectOf(kind, { scale: 5 });
      const decision = expectVerify(decideAdmission(update(kind, old, object)));
      expect(decision.rule).toBe('top-level-scale-up');
      expect(pairs(decision)).toEqual(allImagesOf(kind, object));
      // The template is unchanged: pinning it would start a rollout (or be rejected for a Job).
      expect(decision.mutations).toEqual([]);
    });
  }
  it('ownership is read from the new object: a workload orphaned in the same UPDATE is top-level', () => {
    const old = objectOf('ReplicaSet', { scale: 1, controller: true });
    const object = objectOf('ReplicaSet', { scale: 2 });
    expect(decideAdmission(update('ReplicaSet', old, object)).rule).toBe('top-level-scale-up');
    const adopted = objectOf('ReplicaSet', { scale: 2, controller: true });
    expect(decideAdmission(update('ReplicaSet', objectOf('ReplicaSet', { scale: 1 }), adopted)).rule).toBe(
      'owned-scale-up',
    );
  });
  it('an ownerReference without controller: true does not make a workload owned', () => {
    const old = objectOf('Deployment', { scale: 1 });
    const object = edited(objectOf('Deployment', { scale: 2 }), (o) => {
      setAt(
        o,
        ['metadata', 'ownerReferences'],
        [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'u', controller: false }],
      );
    });
    expect(decideAdmission(update('Deployment', old, object)).rule).toBe('top-level-scale-up');
  });
});

describe('row 7: the template changed in any way: verify every image of the new template', () => {
  const changes: Record<string, (template: Json) => void> = {
    'an image': (t) => setAt(t, ['spec', 'containers', '0', 'image'], 'registry.example/app:2'),
    'an env var': (t) => setAt(t, ['spec', 'containers', '1', 'env'], [{ name: 'A', value: '1' }]),
    'a template annotation (kubectl rollout restart)': (t) =>
      setAt(t, ['metadata', 'annotations'], { 'kubectl.kubernetes.io/restartedAt': '2026-11-30T10:00:00Z' }),
    'the order of containers': (t) => {
      const spec = t.spec as Json;
      spec.containers = [...(spec.containers as unknown[])].reverse();
    },
  };
  for (const kind of TEMPLATE_KINDS) {
    for (const [what, change] of Object.entries(changes)) {
      it(`${kind}: ${what}, even with the scale lowered or owned`, () => {
        const info = WORKLOADS[kind];
        const old = objectOf(kind, { scale: 3, controller: true });
        const object = edited(objectOf(kind, { scale: 1, controller: true }), (o) =>
          change(getAt(o, info.templatePath ?? []) as Json),
        );
        const decision = expectVerify(decideAdmission(update(kind, old, object)));
        expect(decision.rule).toBe('template-changed');
        expect(pairs(decision)).toEqual(allImagesOf(kind, object));
      });
    }
  }
});

describe('rows 8 and 9: Pod UPDATEs verify only changed image fields', () => {
  it('row 8: labels, annotations, finalizers, status and tolerations changed, images not', () => {
    const old = objectOf('Pod');
    const object = edited(old, (o) => {
      setAt(o, ['metadata', 'labels'], { app: 'b' });
      setAt(o, ['metadata', 'finalizers'], []);
      setAt(o, ['spec', 'tolerations'], [{ key: 'k', operator: 'Exists' }]);
      setAt(o, ['spec', 'activeDeadlineSeconds'], 60);
      setAt(o, ['status'], { phase: 'Succeeded' });
    });
    expect(decideAdmission(update('Pod', old, object))).toEqual({
      action: 'admit',
      rule: 'pod-images-unchanged',
    });
  });

  const imageChanges: [string, (o: Json) => void, string][] = [
    [
      'a container',
      (o) => setAt(o, ['spec', 'containers', '1', 'image'], 'registry.example/sidecar:2'),
      'spec.containers[1].image',
    ],
    [
      'an init container',
      (o) => setAt(o, ['spec', 'initContainers', '0', 'image'], 'registry.example/init:2'),
      'spec.initContainers[0].image',
    ],
    [
      'an image volume',
      (o) => setAt(o, ['spec', 'volumes', '0', 'image', 'reference'], 'registry.example/data:2'),
      'spec.volumes[0].image.reference',
    ],
  ];
  for (const [what, change, path] of imageChanges) {
    it(`row 9: ${what} image changed: only that image`, () => {
      const old = objectOf('Pod');
      const decision = expectVerify(decideAdmission(update('Pod', old, edited(old, change))));
      expect(decision.rule).toBe('pod-images-changed');
      expect(decision.images.map((target) => target.path)).toEqual([path]);
      expect(decision.mutations.map((target) => target.path)).toEqual([path]);
    });
  }

  it('row 9: containers are paired by name, not position', () => {
    const old = objectOf('Pod', { spec: podSpec(['a:1', 'b:1']) });
    const object = edited(old, (o) => {
      const spec = o.spec as Json;
      spec.containers = [...(spec.containers as Json[])].reverse();
    });
    expect(decideAdmission(update('Pod', old, object)).rule).toBe('pod-images-unchanged');
  });
});

describe('row 10: pods/ephemeralcontainers verifies only the added ephemeral containers', () => {
  it('adds one debug container to a pod with others', () => {
    const old = objectOf('Pod', {
      spec: podSpec(['unsigned:1'], { ephemeralContainers: [{ name: 'dbg1', image: 'debug:1' }] }),
    });
    const object = edited(old, (o) => {
      ((o.spec as Json).ephemeralContainers as Json[]).push({ name: 'dbg2', image: 'debug:2' });
    });
    const decision = expectVerify(decideAdmission(update('Pod', old, object, 'ephemeralcontainers')));
    expect(decision.rule).toBe('ephemeral-containers-added');
    expect(pairs(decision)).toEqual([['spec.ephemeralContainers[1].image', 'debug:2']]);
    expect(decision.images[0]?.pointer).toBe('/spec/ephemeralContainers/1/image');
  });
  it('nothing added: admitted', () => {
    const old = objectOf('Pod');
    expect(decideAdmission(update('Pod', old, old, 'ephemeralcontainers')).rule).toBe('pod-images-unchanged');
  });
});

describe('requests outside the table', () => {
  it('DELETE and CONNECT are admitted (never registered)', () => {
    for (const operation of ['DELETE', 'CONNECT'] as const) {
      expect(decideAdmission(requestFor('Pod', operation, null, objectOf('Pod')))).toEqual({
        action: 'admit',
        rule: 'operation-not-covered',
      });
    }
  });
  it('a resource without a pod spec is admitted (never registered)', () => {
    const request = {
      ...requestFor('Pod', 'CREATE', { kind: 'ConfigMap' }),
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
    };
    expect(decideAdmission(request).rule).toBe('resource-not-covered');
  });
  it('a resource of another API group is not a covered resource', () => {
    const request = {
      ...requestFor('Deployment', 'CREATE', objectOf('Deployment')),
      kind: { group: 'example.com', version: 'v1', kind: 'Deployment' },
      resource: { group: 'example.com', version: 'v1', resource: 'deployments' },
    };
    expect(decideAdmission(request).rule).toBe('resource-not-covered');
  });
  it('a covered resource carrying an unexpected kind is denied, never admitted unverified', () => {
    const old = objectOf('Pod');
    const ephemeral = {
      ...update(
        'Pod',
        old,
        { apiVersion: 'v1', kind: 'EphemeralContainers', ephemeralContainers: [] },
        'ephemeralcontainers',
      ),
      kind: { group: '', version: 'v1', kind: 'EphemeralContainers' },
    };
    const decision = decideAdmission(ephemeral);
    expect(decision).toMatchObject({ action: 'deny', rule: 'unreadable-request' });
    expect(decision.action === 'deny' && decision.reason).toBe(
      'cannot read a pods/ephemeralcontainers request carrying a EphemeralContainers object (expected Pod; an API server older than Kubernetes 1.23 sends this for ephemeral containers): denied, since what it would run cannot be checked',
    );
    const claimed = {
      ...requestFor('Deployment', 'CREATE', objectOf('Deployment')),
      kind: { group: 'example.com', version: 'v1', kind: 'Deployment' },
    };
    expect(decideAdmission(claimed)).toMatchObject({ action: 'deny', rule: 'unreadable-request' });
  });
  it('an UPDATE without an old object is verified as a CREATE (fail closed)', () => {
    const request = requestFor('Deployment', 'UPDATE', objectOf('Deployment'), null);
    expect(expectVerify(decideAdmission(request)).rule).toBe('create');
  });
  it('a CREATE without an object has nothing to verify', () => {
    expect(decideAdmission(requestFor('Pod', 'CREATE', null))).toEqual({
      action: 'verify',
      rule: 'create',
      images: [],
      mutations: [],
      startsContainers: true,
    });
  });
  it('a Pod subresource Signet does not register is admitted (defensive)', () => {
    const old = objectOf('Pod');
    const changed = edited(old, (o) => setAt(o, ['spec', 'containers', '0', 'image'], 'x:2'));
    expect(decideAdmission(update('Pod', old, changed, 'resize')).rule).toBe('resource-not-covered');
    const deployment = objectOf('Deployment');
    expect(decideAdmission(update('Deployment', deployment, deployment, 'rollback')).rule).toBe(
      'resource-not-covered',
    );
    expect(decideAdmission(update('Pod', old, changed, 'ephemeralcontainers')).rule).toBe(
      'ephemeral-containers-added',
    );
  });
  it('a malformed object throws the ObjectShapeError naming the field', () => {
    const old = objectOf('Deployment');
    const object = edited(old, (o) => setAt(o, ['spec', 'replicas'], 'three'));
    expect(() => decideAdmission(update('Deployment', old, object))).toThrow(ObjectShapeError);
    expect(() => decideAdmission(update('Deployment', old, object))).toThrow('spec.replicas');
  });
});
