import { describe, expect, it } from 'vitest';
import { createRequestFor, podRunning } from '../../src/admission/create-request.js';

describe('createRequestFor', () => {
  it('addresses workloads as the API server does, in their namespace or the default one', () => {
    const request = createRequestFor(
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'shop' }, spec: {} },
      { namespace: 'default' },
    );
    expect(request).toMatchObject({
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      namespace: 'shop',
      name: 'web',
      operation: 'CREATE',
      oldObject: null,
      dryRun: true,
    });
    const pod = createRequestFor(podRunning('app:v1', 'team'), { namespace: 'default' });
    expect(pod).toMatchObject({ kind: { group: '', version: 'v1', kind: 'Pod' }, namespace: 'team' });
    expect(pod?.object?.metadata?.namespace).toBe('team');
  });

  it('has nothing to say about kinds without a pod spec', () => {
    expect(createRequestFor({ apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: 'x' })).toBeUndefined();
    expect(createRequestFor({ kind: 'Pod' }, { namespace: 'x' })).toBeUndefined();
    expect(
      createRequestFor({ apiVersion: 'example.com/v1', kind: 'Deployment' }, { namespace: 'x' }),
    ).toBeUndefined();
  });
});
