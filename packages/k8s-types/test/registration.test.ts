import { describe, expect, it } from 'vitest';
import { registeredRules } from '../src/index.js';

describe('registeredRules', () => {
  it('registers CREATE and UPDATE on the covered resources and pods/ephemeralcontainers, nothing else', () => {
    expect(registeredRules()).toEqual([
      {
        apiGroups: [''],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['pods', 'pods/ephemeralcontainers', 'replicationcontrollers'],
        scope: 'Namespaced',
      },
      {
        apiGroups: ['apps'],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['deployments', 'replicasets', 'statefulsets', 'daemonsets'],
        scope: 'Namespaced',
      },
      {
        apiGroups: ['batch'],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['jobs', 'cronjobs'],
        scope: 'Namespaced',
      },
    ]);
  });

  it('never registers DELETE, status, scale or wildcards', () => {
    for (const rule of registeredRules()) {
      expect(rule.operations).not.toContain('DELETE');
      expect(rule.operations).not.toContain('*');
      for (const resource of rule.resources) expect(resource).not.toMatch(/\/(status|scale)$|\*/);
    }
  });
});
