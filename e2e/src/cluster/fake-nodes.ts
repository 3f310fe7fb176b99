/** Nodes for kwok to play: no taints, room for many Pods, an InternalIP each. */
export function fakeNodes(count: number): object[] {
  return Array.from({ length: count }, (_, index) => {
    const name = `kwok-node-${index}`;
    const resources = { cpu: '32', memory: '256Gi', pods: '110' };
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'node.signet.dev/fake': 'kwok',
        },
        annotations: { 'kwok.x-k8s.io/node': 'fake' },
      },
      status: {
        capacity: resources,
        allocatable: resources,
        addresses: [
          { type: 'InternalIP', address: `10.250.0.${index + 10}` },
          { type: 'Hostname', address: name },
        ],
      },
    };
  });
}
