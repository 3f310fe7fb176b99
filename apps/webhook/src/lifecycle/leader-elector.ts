// One leader elector for every leader-only part: one identity for this replica, one campaign per
// Lease the parts name (policy status and the background scan keep their own Leases, so that
// replicas of different versions agree during a rollout), and each part started when its Lease is
// taken and stopped when it is lost. A campaign's starts and stops run one at a time, in order.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../logger.js';
import type { Elector } from './lifecycle.js';
import type { Part } from './part.js';

/** A Lease taken and renewed for this replica (kube/leader-lease.ts on a cluster). */
export interface Lease {
  start(): void;
  /** Stops renewing; a held Lease is released so that another replica takes it at once. */
  stop(): Promise<void>;
}

export interface LeaseRequest {
  readonly name: string;
  readonly durationMs: number;
  readonly identity: string;
  /** Called when this replica takes the Lease (true) or no longer holds it (false). */
  readonly onChange: (leading: boolean) => void;
}

export interface LeaderElectorOptions {
  /** This replica, as the holder of every Lease (see `replicaIdentity`). */
  readonly identity: string;
  readonly openLease: (request: LeaseRequest) => Lease;
  readonly logger: Logger;
}

/**
 * This replica's name as a Lease holder: the one configured (the Pod name in a cluster), else the
 * host name with a random suffix, since several processes on one host must not share a name.
 */
export function replicaIdentity(configured: string | undefined, random = randomBytes): string {
  return configured ?? `${hostname()}_${random(4).toString('hex')}`;
}

/** The parts that need one Lease, and those of them running now (each with its stop signal). */
interface Campaign {
  readonly lease: Lease;
  readonly parts: Part[];
  readonly running: Map<Part, AbortController>;
  leading: boolean;
  /** The starts and stops, run one after the other. */
  queue: Promise<void>;
}

export class LeaderElector implements Elector {
  readonly #options: LeaderElectorOptions;
  readonly #campaigns = new Map<string, Campaign>();

  constructor(options: LeaderElectorOptions) {
    this.#options = options;
  }

  get identity(): string {
    return this.#options.identity;
  }

  serve(part: Part): void {
    const election = part.leader;
    if (election === undefined) throw new Error(`"${part.name}" does not need the leader`);
    const campaign = this.#campaigns.get(election.lease);
    if (campaign !== undefined) {
      campaign.parts.push(part);
      if (campaign.leading) this.#enqueue(campaign, () => this.#startPart(campaign, part));
      return;
    }
    const opened: Campaign = {
      lease: this.#options.openLease({
        name: election.lease,
        durationMs: election.durationMs,
        identity: this.#options.identity,
        onChange: (leading) => this.#leadershipChanged(opened, leading),
      }),
      parts: [part],
      running: new Map(),
      leading: false,
      queue: Promise.resolve(),
    };
    this.#campaigns.set(election.lease, opened);
    opened.lease.start();
  }

  async withdraw(part: Part): Promise<void> {
    const name = part.leader?.lease ?? '';
    const campaign = this.#campaigns.get(name);
    if (campaign === undefined || !campaign.parts.includes(part)) return;
    campaign.parts.splice(campaign.parts.indexOf(part), 1);
    await this.#enqueue(campaign, () => this.#stopPart(campaign, part, 'Signet is stopping'));
    if (campaign.parts.length > 0) return;
    this.#campaigns.delete(name);
    await campaign.lease.stop();
  }

  #leadershipChanged(campaign: Campaign, leading: boolean): void {
    campaign.leading = leading;
    void this.#enqueue(campaign, async () => {
      if (leading) {
        for (const part of campaign.parts) await this.#startPart(campaign, part);
      } else {
        for (const part of [...campaign.running.keys()].reverse())
          await this.#stopPart(campaign, part, 'the Lease was lost');
      }
    });
  }

  #enqueue(campaign: Campaign, step: () => Promise<void>): Promise<void> {
    campaign.queue = campaign.queue.then(step);
    return campaign.queue;
  }

  /** Starts `part` for this term of leadership, unless it runs already or the Lease went meanwhile. */
  async #startPart(campaign: Campaign, part: Part): Promise<void> {
    if (!campaign.leading || campaign.running.has(part) || !campaign.parts.includes(part)) return;
    const term = new AbortController();
    campaign.running.set(part, term);
    try {
      await part.start(term.signal);
    } catch (error) {
      campaign.running.delete(part);
      this.#options.logger.error({ err: error, part: part.name }, 'a leader-only part did not start');
    }
  }

  async #stopPart(campaign: Campaign, part: Part, why: string): Promise<void> {
    const term = campaign.running.get(part);
    if (term === undefined) return;
    campaign.running.delete(part);
    term.abort(new Error(why));
    try {
      await part.stop(0);
    } catch (error) {
      this.#options.logger.error({ err: error, part: part.name }, 'a leader-only part did not stop cleanly');
    }
  }
}
