// The worker pools policies compile and evaluate in, as one part: the CUE and Rego engines loaded on
// the first such policy (ADR 0005), CEL off the event loop in worker threads started by the first
// CEL policy, and what `/validate-policy` may spend, its own engines and CEL worker (issue 21).
// Nothing starts until a policy needs it; stopping closes every worker.
import { CelWorkers } from '@signet/verifier';
import type { Part } from '../lifecycle/part.js';
import type { Logger } from '../logger.js';
import { WebhookPolicyEngines } from './policy-engines.js';
import { ValidationCapacity } from './validation-capacity.js';

export class ComputePools implements Part {
  readonly name = 'policy engines and CEL workers';
  readonly engines: WebhookPolicyEngines;
  readonly cel: CelWorkers;
  readonly capacity: ValidationCapacity;

  constructor(options: { readonly logger: Logger; readonly validationConcurrency: number }) {
    const { logger } = options;
    this.engines = new WebhookPolicyEngines(logger);
    this.cel = new CelWorkers({
      onEvent: (event) =>
        event.type === 'started'
          ? logger.info({ startupMs: Math.round(event.startupMs) }, 'CEL worker started')
          : logger.warn({ reason: event.reason }, 'CEL worker stopped'),
    });
    this.capacity = new ValidationCapacity({ logger, concurrency: options.validationConcurrency });
  }

  /** Nothing to start: each pool starts its workers when a policy first needs them. */
  start(): void {}

  async stop(): Promise<void> {
    await Promise.all([this.engines.close(), this.cel.close(), this.capacity.close()]);
  }
}
