// The chart's NetworkPolicy, rendered by the real helm (3 and 4): the admission port answers only
// the API server's source addresses and the listed peers, and the chart never renders a policy
// that leaves the API server out (with failurePolicy Fail that would refuse every covered write).
// e2e/test/kind.test.ts proves the same policy in a cluster whose network plugin enforces it.
import { describe, expect, it } from 'vitest';
import {
  CHART_DIR,
  HELM_MAJORS,
  type HelmMajor,
  type K8sObject,
  NAMESPACE,
  only,
  RELEASE,
  renderChart,
  renderError,
  runHelm,
} from './render.js';

interface NetworkPolicy {
  readonly spec: {
    readonly podSelector: Record<string, unknown>;
    readonly policyTypes: string[];
    readonly ingress: { ports: { port: string; protocol: string }[]; from?: Record<string, unknown>[] }[];
  };
}

const policy = (objects: readonly K8sObject[]) => only<NetworkPolicy>(objects, 'NetworkPolicy');
const ADMISSION_PORT = [{ port: 'https', protocol: 'TCP' }];
const OPS_PORT = [{ port: 'ops', protocol: 'TCP' }];
const monitoring = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
const konnectivity = {
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
  podSelector: { matchLabels: { 'k8s-app': 'konnectivity-agent' } },
};

describe.each(HELM_MAJORS)('the chart NetworkPolicy under %s', (major: HelmMajor) => {
  it('is off by default', async () => {
    expect((await renderChart(major)).some((o) => o.kind === 'NetworkPolicy')).toBe(false);
  });

  it('admission port: the API server CIDRs then the listed peers; ops port: its own peers only', async () => {
    const rendered = policy(
      await renderChart(major, {
        networkPolicy: {
          enabled: true,
          apiServerCIDRs: ['172.18.0.2/32', 'fd00:10::2/128'],
          webhookFrom: [konnectivity],
          metricsFrom: [monitoring],
        },
      }),
    );
    expect(rendered.spec).toEqual({
      podSelector: {
        matchLabels: {
          'app.kubernetes.io/name': 'signet',
          'app.kubernetes.io/instance': RELEASE,
          'app.kubernetes.io/component': 'admission-webhook',
        },
      },
      policyTypes: ['Ingress'],
      ingress: [
        {
          ports: ADMISSION_PORT,
          from: [
            { ipBlock: { cidr: '172.18.0.2/32' } },
            { ipBlock: { cidr: 'fd00:10::2/128' } },
            konnectivity,
          ],
        },
        { ports: OPS_PORT, from: [monitoring] },
      ],
    });
    // Either list alone is enough; without metricsFrom the ops port has no rule (only the node's kubelet).
    expect(
      policy(await renderChart(major, { networkPolicy: { enabled: true, apiServerCIDRs: ['10.0.0.11/32'] } }))
        .spec.ingress,
    ).toEqual([{ ports: ADMISSION_PORT, from: [{ ipBlock: { cidr: '10.0.0.11/32' } }] }]);
    expect(
      policy(await renderChart(major, { networkPolicy: { enabled: true, webhookFrom: [konnectivity] } })).spec
        .ingress,
    ).toEqual([{ ports: ADMISSION_PORT, from: [konnectivity] }]);
  });

  it('refuses a policy without the API server, and one that lists sources yet opens the port to all', async () => {
    for (const values of [
      { networkPolicy: { enabled: true } },
      { networkPolicy: { enabled: true, metricsFrom: [monitoring] } },
      { networkPolicy: { enabled: true, apiServerCIDRs: [], webhookFrom: [] } },
    ]) {
      const error = await renderError(major, values);
      expect(error, JSON.stringify(values)).toContain(
        "networkPolicy.enabled=true needs the API server's source addresses: set networkPolicy.apiServerCIDRs",
      );
      expect(error).toContain('Restricting who can reach the admission port');
      expect(error).toContain('networkPolicy.webhookFromAnywhere=true');
    }
    for (const sources of [{ apiServerCIDRs: ['10.0.0.11/32'] }, { webhookFrom: [konnectivity] }]) {
      expect(
        await renderError(major, { networkPolicy: { enabled: true, webhookFromAnywhere: true, ...sources } }),
      ).toContain('networkPolicy.webhookFromAnywhere=true opens the admission port to every source');
    }
    // Off, nothing is checked: the lists may be filled in before the policy is turned on.
    expect(
      await renderError(major, {
        networkPolicy: { enabled: false, webhookFromAnywhere: true, apiServerCIDRs: ['10.0.0.11/32'] },
      }),
    ).toBe('');
  });

  it('webhookFromAnywhere: the admission port open to every source, the ops port still restricted', async () => {
    const rendered = policy(
      await renderChart(major, {
        networkPolicy: { enabled: true, webhookFromAnywhere: true, metricsFrom: [monitoring] },
      }),
    );
    expect(rendered.spec.ingress).toEqual([
      { ports: ADMISSION_PORT },
      { ports: OPS_PORT, from: [monitoring] },
    ]);
  });

  it('the schema refuses what is not a CIDR or a NetworkPolicyPeer, naming the field', async () => {
    const refusals: [object, string][] = [
      [{ apiServerCIDRs: ['10.0.0.11'] }, '/networkPolicy/apiServerCIDRs/0'],
      [{ apiServerCIDRs: ['10.0.0.256/32'] }, '/networkPolicy/apiServerCIDRs/0'],
      [{ apiServerCIDRs: ['10.0.0.0/33'] }, '/networkPolicy/apiServerCIDRs/0'],
      [{ apiServerCIDRs: ['api.example.com/32'] }, '/networkPolicy/apiServerCIDRs/0'],
      // Everything is not an API server address: webhookFromAnywhere says that explicitly.
      [{ apiServerCIDRs: ['0.0.0.0/0'] }, '/networkPolicy/apiServerCIDRs/0'],
      [{ apiServerCIDRs: ['::/0'] }, '/networkPolicy/apiServerCIDRs/0'],
      [{ apiServerCIDRs: '10.0.0.11/32' }, '/networkPolicy/apiServerCIDRs'],
      [{ webhookFrom: [{}] }, '/networkPolicy/webhookFrom/0'],
      [{ webhookFrom: [{ namespaceselector: {} }] }, "additional properties 'namespaceselector' not allowed"],
      [{ webhookFrom: [{ ipBlock: { except: ['10.0.0.0/8'] } }] }, '/networkPolicy/webhookFrom/0/ipBlock'],
      [
        { webhookFrom: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0'] } }] },
        '/networkPolicy/webhookFrom/0/ipBlock/except/0',
      ],
      [
        { webhookFrom: [{ podSelector: { matchLabels: { app: 1 } } }] },
        '/networkPolicy/webhookFrom/0/podSelector/matchLabels/app',
      ],
      [{ metricsFrom: [{ podselector: {} }] }, '/networkPolicy/metricsFrom/0'],
      [{ webhookFromAnywhere: 'yes' }, '/networkPolicy/webhookFromAnywhere'],
      [{ apiServerCidrs: ['10.0.0.11/32'] }, "additional properties 'apiServerCidrs' not allowed"],
    ];
    for (const [networkPolicy, message] of refusals) {
      const values = { networkPolicy: { enabled: true, ...networkPolicy } };
      const error = await renderError(major, values);
      expect(error, JSON.stringify(values)).toContain("values don't meet the specifications of the schema");
      expect(error, JSON.stringify(values)).toContain(message);
    }
  });
});

// Helm 3's `install --dry-run=client` asks a cluster for its version; NOTES are read with Helm 4.
describe('the NetworkPolicy in the chart NOTES (helm4)', () => {
  const notes = async (values: object) => {
    const run = await runHelm(
      'helm4',
      ['install', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--dry-run=client'],
      values,
    );
    expect(run.ok, run.stderr).toBe(true);
    return run.stdout.slice(run.stdout.indexOf('NOTES:'));
  };

  it('say what each port answers and how to check the API server reaches every replica', async () => {
    expect(await notes({})).not.toContain('NetworkPolicy');
    const restricted = await notes({
      networkPolicy: {
        enabled: true,
        apiServerCIDRs: ['172.18.0.2/32', '172.18.0.3/32'],
        webhookFrom: [konnectivity],
      },
    });
    expect(restricted).toContain(
      `NetworkPolicy ${RELEASE}-webhook: the admission port (8443) answers only 172.18.0.2/32, 172.18.0.3/32 and the 1 peer(s) in networkPolicy.webhookFrom; the operations port (8080) only the Pod's own node (kubelet probes).`,
    );
    expect(restricted).toContain('every covered write is refused (failurePolicy Fail)');
    expect(restricted).toContain(
      'NotFound ("the server could not find the requested resource") is Signet\'s own answer, so reachable; "error trying to reach service" means blocked.',
    );
    expect(restricted).toContain(
      `kubectl get --raw "/api/v1/namespaces/${NAMESPACE}/pods/https:\${pod#pod/}:8443/proxy/"`,
    );
    const open = await notes({
      networkPolicy: { enabled: true, webhookFromAnywhere: true, metricsFrom: [monitoring] },
    });
    expect(open).toContain(
      'the admission port (8443) answers every source (networkPolicy.webhookFromAnywhere=true); the operations port (8080) only the 1 peer(s) in networkPolicy.metricsFrom.',
    );
    expect(open).not.toContain('kubectl get --raw');
  });
});
