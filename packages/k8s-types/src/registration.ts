import { WORKLOAD_LIST } from './workloads.js';

// What Signet registers with the API server, declared next to the workload catalogue so the
// generated webhook configurations cannot drift from the kinds the decisions cover.
// The admission contract: CREATE and UPDATE only; never DELETE, never `*/status`, never `*/scale`.

export const REGISTERED_OPERATIONS = ['CREATE', 'UPDATE'] as const;

/** Subresources whose writes can start a container, per resource. */
export const REGISTERED_SUBRESOURCES: Readonly<Record<string, readonly string[]>> = {
  pods: ['ephemeralcontainers'],
};

export interface RegisteredRule {
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly operations: readonly (typeof REGISTERED_OPERATIONS)[number][];
  readonly resources: readonly string[];
  readonly scope: 'Namespaced';
}

/** One rule per API group, resources in catalogue order, subresources after their resource. */
export function registeredRules(): RegisteredRule[] {
  const byGroup = new Map<string, string[]>();
  for (const info of WORKLOAD_LIST) {
    const resources = byGroup.get(info.group) ?? [];
    resources.push(
      info.resource,
      ...(REGISTERED_SUBRESOURCES[info.resource] ?? []).map((s) => `${info.resource}/${s}`),
    );
    byGroup.set(info.group, resources);
  }
  return [...byGroup].map(([group, resources]) => ({
    apiGroups: [group],
    apiVersions: ['v1'],
    operations: [...REGISTERED_OPERATIONS],
    resources,
    scope: 'Namespaced',
  }));
}
