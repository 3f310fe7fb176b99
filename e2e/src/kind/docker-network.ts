import type { Docker } from '@signet/testbed';

/** A Docker bridge network for one kind cluster, with a configured IPv4 subnet. */
export interface KindNetwork {
  readonly name: string;
  /** e.g. `172.18.0.0/16` */
  readonly subnet: string;
  /** The host's address on the network (the bridge): where the nodes reach host processes. */
  readonly gateway: string;
  /** A fixed address in the subnet, kept free of the nodes' addresses, for the registry container. */
  readonly registryIp: string;
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
    // As kind creates its network: Pods reach other networks through the node's address.
    '--opt',
    'com.docker.network.bridge.enable_ip_masquerade=true',
    name,
  ]);
  return { name, subnet: config.Subnet, gateway: config.Gateway, registryIp: addressAt(config.Subnet, 200) };
}

export async function removeKindNetwork(docker: Docker, name: string): Promise<void> {
  await docker.run(['network', 'rm', name]).catch(() => undefined);
}
