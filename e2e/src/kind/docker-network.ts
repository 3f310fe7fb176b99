import { type Docker, runCommand } from '@signet/testbed';

/** A Docker bridge network for one kind cluster, with a configured IPv4 subnet. */
export interface KindNetwork {
  readonly name: string;
  /** e.g. `172.18.0.0/16` */
  readonly subnet: string;
  /** The host's address on the network (the bridge): where the nodes reach host processes. */
  readonly gateway: string;
  /** A fixed address in the subnet, kept free of the nodes' addresses, for the registry container. */
  readonly registryIp: string;
  /** The host's bridge interface of the network. */
  readonly bridge: string;
}

interface IpamConfig {
  readonly Subnet?: string;
  readonly Gateway?: string;
}

const ipv4 = (value: string | undefined): value is string =>
  value !== undefined && /^\d+\.\d+\.\d+\.\d+/.test(value);

function addressAt(subnet: string, offset: number): string {
  const [base = '', bits = '32'] = subnet.split('/');
  const value = base.split('.').reduce((sum, part) => sum * 256 + Number(part), 0);
  const size = 2 ** (32 - Number(bits));
  if (offset >= size - 1) throw new Error(`subnet ${subnet} is too small`);
  const address = value + offset;
  return [24, 16, 8, 0].map((shift) => Math.floor(address / 2 ** shift) % 256).join('.');
}

/**
 * Creates `name` with the IPv4 subnet Docker itself picks as free on this machine (created once
 * without one to learn it, then again with it): with a configured subnet, a container can have a
 * fixed address (`--ip`) that survives a restart. kind uses an existing network of the name it is
 * given (`KIND_EXPERIMENTAL_DOCKER_NETWORK`). Nodes get addresses from the bottom of the subnet.
 */
export async function createKindNetwork(docker: Docker, name: string): Promise<KindNetwork> {
  await docker.run(['network', 'create', '--driver', 'bridge', name]);
  const inspected = await docker.run(['network', 'inspect', '--format', '{{json .IPAM.Config}}', name]);
  const config = (JSON.parse(inspected.stdout) as IpamConfig[]).find((c) => ipv4(c.Subnet));
  await docker.run(['network', 'rm', name]);
  if (!config?.Subnet || !ipv4(config.Gateway)) {
    throw new Error(`Docker gave network ${name} no IPv4 subnet: ${inspected.stdout.trim()}`);
  }
  await docker.run([
    'network',
    'create',
    '--driver',
    'bridge',
    '--subnet',
    config.Subnet,
    '--gateway',
    config.Gateway,
    '--opt',
    `com.docker.network.bridge.name=${name.slice(0, 15)}`,
    name,
  ]);
  const network = {
    name,
    subnet: config.Subnet,
    gateway: config.Gateway,
    registryIp: addressAt(config.Subnet, 200),
    bridge: name.slice(0, 15),
  };
  try {
    await confineNetwork(network, 'insert');
  } catch (error) {
    await docker.run(['network', 'rm', name]).catch(() => undefined);
    throw error;
  }
  return network;
}

/** The host firewall rule that keeps the cluster's traffic on this machine (see `confineNetwork`). */
function confinementRule(network: Pick<KindNetwork, 'bridge'>): string[] {
  // By interface, not by address: node-to-node Pod traffic (addressed to a Pod IP, outside the
  // subnet) is bridged between the nodes and, with br_netfilter loaded, passes FORWARD too.
  return [
    'DOCKER-USER',
    '--in-interface',
    network.bridge,
    '!',
    '--out-interface',
    network.bridge,
    '--match',
    'comment',
    '--comment',
    `signet-e2e: keep ${network.bridge} local`,
    '--jump',
    'DROP',
  ];
}

/**
 * Drops whatever the cluster would forward off its own network, as Docker does for an internal
 * network (which kind cannot use: it publishes the API server's port). DOCKER-USER is the chain
 * Docker leaves to such rules. A kind node sends a packet for an address it has no route to (a Service
 * IP in a gap of kube-proxy's rules, the IP of a Pod that just ended) to its default gateway, the
 * host, which would forward it off the machine: these machines must never send test traffic to
 * other addresses. The host itself (the naive webhook on the gateway address) stays reachable.
 */
async function confineNetwork(
  network: Pick<KindNetwork, 'bridge' | 'subnet'>,
  how: 'insert' | 'delete',
): Promise<void> {
  const rule = confinementRule(network);
  try {
    await runCommand('iptables', [how === 'insert' ? '--insert' : '--delete', ...rule], {
      timeoutMs: 30_000,
    });
  } catch (error) {
    if (how === 'delete') return;
    throw new Error(
      `cannot add the firewall rule that keeps kind's traffic on this machine (iptables ${rule.join(' ')}; needs root and Docker's DOCKER-USER chain): ${(error as Error).message}`,
      { cause: error },
    );
  }
}

export async function removeKindNetwork(docker: Docker, network: KindNetwork): Promise<void> {
  await docker.run(['network', 'rm', network.name]).catch(() => undefined);
  await confineNetwork(network, 'delete');
}
