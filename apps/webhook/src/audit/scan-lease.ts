// Only one replica scans: a coordination.k8s.io Lease, taken and renewed as client-go's leader
// election does. Expiry is judged by when this replica last saw the Lease change (its own clock),
// never by comparing another replica's timestamps with ours, so clock skew cannot split the lead.
import { type KubeClient, statusOf } from '../kube/client.js';
import type { Logger } from '../logger.js';

/** The fields of a coordination.k8s.io/v1 Lease the scan uses. */
interface Lease {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** A MicroTime: RFC 3339 with microseconds, as the API server wants it. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

export interface ScanLeaseOptions {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly name: string;
  /** This replica (the Pod's name): who holds the Lease. */
  readonly identity: string;
  readonly logger: Logger;
  /** How long a holder that stopped renewing keeps the Lease (default 30 s); renewals every third. */
  readonly durationMs?: number;
  readonly onChange?: (leading: boolean) => void;
  readonly now?: () => number;
}

export class ScanLease {
  readonly #client: KubeClient;
  readonly #options: ScanLeaseOptions;
  readonly #durationMs: number;
  readonly #now: () => number;
  #leading = false;
  /** The holder's last renewal as we saw it, and when we saw it. */
  #observed: { renewTime: string; holder: string; at: number } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: ScanLeaseOptions) {
    this.#client = options.client;
    this.#options = options;
    this.#durationMs = options.durationMs ?? 30_000;
    this.#now = options.now ?? Date.now;
  }

  get leading(): boolean {
    return this.#leading;
  }

  start(): void {
    void this.#tick();
  }

  /** Stops renewing; a held Lease is released so another replica takes over at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    if (!this.#leading) return;
    this.#set(false);
    try {
      const lease = await this.#read();
      if (lease?.spec?.holderIdentity === this.#options.identity) {
        lease.spec.holderIdentity = '';
        lease.spec.leaseDurationSeconds = 1;
        await this.#replace(lease);
      }
    } catch (error) {
      this.#options.logger.warn({ err: error }, 'could not release the scan Lease');
    }
  }

  async #tick(): Promise<void> {
    try {
      this.#set(await this.#tryAcquireOrRenew());
    } catch (error) {
      // Another replica created or renewed it between our read and write: it leads.
      if (statusOf(error) === 409) this.#set(false);
      else {
        // Unsure whether we still hold it: stop scanning (another replica may take over).
        this.#options.logger.warn({ err: error }, 'scan Lease: cannot acquire or renew');
        this.#set(false);
      }
    }
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#tick(), this.#durationMs / 3);
    this.#timer.unref();
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { identity, namespace, name } = this.#options;
    const now = this.#now();
    const lease = await this.#read();
    const spec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.#durationMs / 1000),
      renewTime: microTime(now),
    };
    if (lease === undefined) {
      await this.#client.create(
        this.#collection(),
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: { ...spec, acquireTime: microTime(now), leaseTransitions: 0 },
        },
        { timeoutMs: this.#timeoutMs() },
      );
      return true;
    }
    const current = lease.spec ?? {};
    const holder = current.holderIdentity ?? '';
    const renewTime = current.renewTime ?? '';
    if (this.#observed?.renewTime !== renewTime || this.#observed.holder !== holder)
      this.#observed = { renewTime, holder, at: now };
    const durationMs = (current.leaseDurationSeconds ?? 0) * 1000;
    const held = holder !== '' && holder !== identity && now - this.#observed.at < durationMs;
    if (held) return false;
    const takeover = holder !== identity;
    lease.spec = {
      ...current,
      ...spec,
      ...(takeover
        ? { acquireTime: microTime(now), leaseTransitions: (current.leaseTransitions ?? 0) + 1 }
        : {}),
    };
    // The replace carries the resourceVersion we read: of two replicas taking over, one gets 409.
    await this.#replace(lease);
    return true;
  }

  async #read(): Promise<Lease | undefined> {
    try {
      return await this.#client.get<Lease>(`${this.#collection()}/${this.#options.name}`, {
        timeoutMs: this.#timeoutMs(),
      });
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  async #replace(lease: Lease): Promise<void> {
    await this.#client.replace(`${this.#collection()}/${this.#options.name}`, lease, {
      timeoutMs: this.#timeoutMs(),
    });
  }

  #collection(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#options.namespace)}/leases`;
  }

  /** A call must end well before the Lease would expire. */
  #timeoutMs(): number {
    return Math.max(1000, this.#durationMs / 3);
  }

  #set(leading: boolean): void {
    if (leading === this.#leading) return;
    this.#leading = leading;
    this.#options.logger.info(
      { identity: this.#options.identity, leading },
      leading ? 'scan Lease acquired' : 'scan Lease lost',
    );
    this.#options.onChange?.(leading);
  }
}
