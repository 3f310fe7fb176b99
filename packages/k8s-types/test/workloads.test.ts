import { describe, expect, it } from 'vitest';
import {
  controllerOf,
  type KubeObject,
  ObjectShapeError,
  pathString,
  podSpecOf,
  podTemplateOf,
  scaleOf,
  valueAt,
  WORKLOAD_LIST,
  WORKLOADS,
  type WorkloadKind,
  workloadForKind,
  workloadForResource,
} from '../src/index.js';
import { fixture } from './fixtures.js';

/** An object of `kind` whose pod spec (at the catalogue's path) is `spec`. */
function objectWithPodSpec(kind: WorkloadKind, spec: unknown, scale?: number): KubeObject {
  const info = WORKLOADS[kind];
  const root: Record<string, unknown> = { kind, metadata: { name: 'x' } };
  let node = root;
  const path = info.podSpecPath;
  path.forEach((key, i) => {
    if (i === path.length - 1) {
      node[key] = spec;
    } else {
      node[key] ??= {};
      node = node[key] as Record<string, unknown>;
    }
  });
  if (info.scalePath && scale !== undefined)
    (root.spec as Record<string, unknown>)[info.scalePath[1] as string] = scale;
  return root;
}

describe('the workload catalogue', () => {
  it('covers the eight kinds the contract names, with their pod spec and scale fields', () => {
    const table = Object.fromEntries(
      WORKLOAD_LIST.map((w) => [
        w.kind,
        [`${w.group}/${w.resource}`, pathString(w.podSpecPath), w.scalePath && pathString(w.scalePath)],
      ]),
    );
    expect(table).toEqual({
      Pod: ['/pods', 'spec', null],
      Deployment: ['apps/deployments', 'spec.template.spec', 'spec.replicas'],
      ReplicaSet: ['apps/replicasets', 'spec.template.spec', 'spec.replicas'],
      StatefulSet: ['apps/statefulsets', 'spec.template.spec', 'spec.replicas'],
      DaemonSet: ['apps/daemonsets', 'spec.template.spec', null],
      Job: ['batch/jobs', 'spec.template.spec', 'spec.parallelism'],
      CronJob: ['batch/cronjobs', 'spec.jobTemplate.spec.template.spec', null],
      ReplicationController: ['/replicationcontrollers', 'spec.template.spec', 'spec.replicas'],
    });
  });

  it('templates sit one level above the pod spec', () => {
    for (const info of WORKLOAD_LIST) {
      if (info.templatePath === null) expect(info.kind).toBe('Pod');
      else expect([...info.templatePath, 'spec']).toEqual(info.podSpecPath);
    }
  });

  it('looks kinds up by group and kind, and by group and resource', () => {
    expect(workloadForKind('apps', 'Deployment')?.resource).toBe('deployments');
    expect(workloadForKind('', 'Deployment')).toBeUndefined();
    expect(workloadForKind('', 'ConfigMap')).toBeUndefined();
    expect(workloadForKind('', 'toString')).toBeUndefined();
    expect(workloadForResource('batch', 'cronjobs')?.kind).toBe('CronJob');
    expect(workloadForResource('', 'replicationcontrollers')?.kind).toBe('ReplicationController');
    expect(workloadForResource('apps', 'pods')).toBeUndefined();
  });

  it.each(WORKLOAD_LIST.map((w) => [w.kind]))('reads the pod spec, template and scale of a %s', (kind) => {
    const info = WORKLOADS[kind];
    const spec = { containers: [{ name: 'c', image: 'alpine' }] };
    const object = objectWithPodSpec(kind, spec, 3);
    expect(podSpecOf(info, object)).toBe(spec);
    expect(podTemplateOf(info, object)?.spec).toBe(spec);
    expect(scaleOf(info, object)).toBe(info.scalePath ? 3 : undefined);
    expect(podSpecOf(info, { kind })).toBeUndefined();
    const empty = { kind, spec: null };
    // A Pod is its own template; other kinds without a template have none.
    expect(podTemplateOf(info, empty)).toBe(info.templatePath ? undefined : empty);
  });

  it('reads the fixtures', () => {
    const rs = (
      fixture('replicaset-scale-down.json') as { request: { object: KubeObject; oldObject: KubeObject } }
    ).request;
    expect(scaleOf(WORKLOADS.ReplicaSet, rs.oldObject)).toBe(2);
    expect(scaleOf(WORKLOADS.ReplicaSet, rs.object)).toBe(1);
    expect(controllerOf(rs.object)).toMatchObject({ kind: 'Deployment', name: 'foo-bar', controller: true });
    const cron = (fixture('cronjob-create.json') as { request: { object: KubeObject } }).request.object;
    expect(podSpecOf(WORKLOADS.CronJob, cron)?.restartPolicy).toBe('OnFailure');
  });

  it('rejects malformed pod specs and scales with the field path', () => {
    const info = WORKLOADS.Deployment;
    expect(() => podSpecOf(info, { spec: { template: { spec: 'x' } } })).toThrow(
      new ObjectShapeError('spec.template.spec', 'must be an object, got string'),
    );
    expect(() => podTemplateOf(info, { spec: { template: [] } })).toThrow(
      'spec.template: must be an object, got array',
    );
    expect(() => podTemplateOf(WORKLOADS.Pod, 'x' as unknown as KubeObject)).toThrow(
      '<root>: must be an object, got string',
    );
    expect(() => scaleOf(info, { spec: { replicas: '3' } })).toThrow(
      'spec.replicas: must be a non-negative integer, got string',
    );
    expect(() => scaleOf(info, { spec: { replicas: -1 } })).toThrow(
      'spec.replicas: must be a non-negative integer',
    );
    expect(() => scaleOf(info, { spec: { replicas: 1.5 } })).toThrow(
      'spec.replicas: must be a non-negative integer',
    );
    expect(scaleOf(info, { spec: { replicas: null } })).toBeUndefined();
    expect(scaleOf(info, { spec: {} })).toBeUndefined();
  });

  it('finds only the controller owner', () => {
    const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u' };
    expect(controllerOf({ metadata: { ownerReferences: [owner] } })).toBeUndefined();
    expect(
      controllerOf({ metadata: { ownerReferences: [owner, { ...owner, controller: true }] } })?.controller,
    ).toBe(true);
    expect(controllerOf({ metadata: {} })).toBeUndefined();
    expect(controllerOf({})).toBeUndefined();
  });

  it('valueAt stops at missing or non-object steps', () => {
    expect(valueAt({ a: { b: 1 } }, ['a', 'b'])).toBe(1);
    expect(valueAt({ a: 1 }, ['a', 'b'])).toBeUndefined();
    expect(valueAt(null, ['a'])).toBeUndefined();
    expect(valueAt({ a: 1 }, [])).toEqual({ a: 1 });
  });
});
