// One replica at a time does a job (writing policy status): the holder of a coordination.k8s.io/v1
// Lease, taken and renewed as client-go's leader election does. Whether the holder stopped
// renewing is judged by when THIS replica last saw the Lease change, on its own clock, never by
// comparing the holder's timestamps with ours: clock skew between nodes cannot split the lead.
// Every write carries the resourceVersion read, so of two replicas taking over one gets 409.
import { type V1Lease, V1MicroTime } from '@kubernetes/client-node';
import type { Logger } from '../logger.js';
import type { KubeApi } from './kube-api.js';
import { statusOf } from './kube-errors.js';

export interface LeaderLeaseOptions {
  readonly api: KubeApi;
  readonly namespace: string;
  readonly name: string;
  /** Who this replica is (Pod name and a per-process suffix). */
  readonly identity: string;
  readonly logger: Logger;
  /** How long a holder that stopped renewing keeps the Lease (default 15 s); tries every third. */
  readonly durationMs?: number;
  readonly onChange?: (leading: boolean) => void;
  readonly now?: () => number;
}

/** A MicroTime as read: client-node leaves it the API's string (its model has no type for it). */
function timeText(time: unknown): string {
  return time instanceof Date ? time.toISOString() : typeof time === 'string' ? time : '';
}

export class LeaderLease {
  readonly #options: LeaderLeaseOptions;
  readonly #durationMs: number;
  readonly #now: () => number;
  #leading = false;
  /** The holder and renewTime as last seen, and when this replica saw them change. */
  #observed: { readonly holder: string; readonly renewTime: string; readonly at: number } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(options: LeaderLeaseOptions) {
    this.#options = options;
    this.#durationMs = options.durationMs ?? 15_000;
    this.#now = options.now ?? Date.now;
  }

  get leading(): boolean {
    return this.#leading;
  }

  start(): void {
    this.#running ??= this.#tick();
  }

  /** Stops trying; a held Lease is released (holder emptied) so that another replica takes it at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
    if (!this.#leading) return;
    this.#set(false);
    try {
      const lease = await this.#read();
      if (lease?.spec?.holderIdentity !== this.#options.identity) return;
      lease.spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1 };
      await this.#replace(lease);
    } catch (error) {
      this.#options.logger.warn({ err: error, lease: this.#options.name }, 'could not release the Lease');
    }
  }

  async #tick(): Promise<void> {
    try {
      this.#set(await this.#acquireOrRenew());
    } catch (error) {
      // 409: another replica wrote it between our read and our write; it leads. Anything else:
      // we cannot tell whether we still hold it, so we stop acting as the leader.
      if (statusOf(error) !== 409)
        this.#options.logger.warn(
          { err: error, lease: this.#options.name },
          'cannot take or renew the Lease',
        );
      this.#set(false);
    }
    this.#running = undefined;
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.#tick();
    }, this.#durationMs / 3);
    this.#timer.unref();
  }

  async #acquireOrRenew(): Promise<boolean> {
    const { identity, namespace, name } = this.#options;
    const now = this.#now();
    const ours = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.#durationMs / 1000),
      renewTime: new V1MicroTime(now),
    };
    const lease = await this.#read();
    if (lease === undefined) {
      await this.#options.api.coordination.createNamespacedLease(
        {
          namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace },
            spec: { ...ours, acquireTime: new V1MicroTime(now), leaseTransitions: 0 },
          },
        },
        this.#options.api.deadline(this.#callTimeoutMs()),
      );
      return true;
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const renewTime = timeText(spec.renewTime);
    if (this.#observed?.holder !== holder || this.#observed.renewTime !== renewTime)
      this.#observed = { holder, renewTime, at: now };
    const heldByAnother =
      holder !== '' &&
      holder !== identity &&
      now - this.#observed.at < (spec.leaseDurationSeconds ?? 0) * 1000;
    if (heldByAnother) return false;
    const takeover = holder !== identity;
    lease.spec = {
      ...spec,
      ...ours,
      ...(takeover
        ? { acquireTime: new V1MicroTime(now), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }
        : {}),
    };
    await this.#replace(lease);
    return true;
  }

  async #read(): Promise<V1Lease | undefined> {
    const { namespace, name } = this.#options;
    try {
      return await this.#options.api.coordination.readNamespacedLease(
        { name, namespace },
        this.#options.api.deadline(this.#callTimeoutMs()),
      );
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  /** Carries the resourceVersion read: of two replicas writing, one gets 409. */
  async #replace(lease: V1Lease): Promise<void> {
    const { namespace, name } = this.#options;
    await this.#options.api.coordination.replaceNamespacedLease(
      { name, namespace, body: lease },
      this.#options.api.deadline(this.#callTimeoutMs()),
    );
  }

  /** A call must end well before the Lease could expire. */
  #callTimeoutMs(): number {
    return Math.max(1000, this.#durationMs / 3);
  }

  #set(leading: boolean): void {
    if (leading === this.#leading) return;
    this.#leading = leading;
    this.#options.logger.info(
      { lease: this.#options.name, identity: this.#options.identity, leading },
      leading ? 'took the Lease' : 'no longer holds the Lease',
    );
    this.#options.onChange?.(leading);
  }
}
