// The CUE and Rego engines as the webhook uses them: loaded on the first CUE or Rego policy (a
// cluster without one never imports @signet/policy-engines, starts no worker, maps no WebAssembly),
// and compiled once per policy source: every snapshot recompiles all policies, and an unchanged
// policy gets the program it already has. Programs no snapshot uses any more are released one
// snapshot late, so that admissions still running on the previous snapshot keep theirs.
import { createHash } from 'node:crypto';
import type { EngineLanguage, EngineProgram, PolicyEngineHost } from '@signet/verifier';
import type { Logger } from '../logger.js';

type Engines = import('@signet/policy-engines').PolicyEngines;
type EnginePolicy = import('@signet/policy-engines').EnginePolicy;

interface Entry {
  readonly program: Promise<EnginePolicy>;
  /** The last snapshot generation that used it. */
  generation: number;
}

export class WebhookPolicyEngines implements PolicyEngineHost {
  readonly #logger: Logger;
  #engines: Promise<Engines> | undefined;
  readonly #entries = new Map<string, Entry>();
  #generation = 0;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Whether a CUE or Rego policy was ever compiled (the engines were loaded). */
  get loaded(): boolean {
    return this.#engines !== undefined;
  }

  compile(language: EngineLanguage, source: string): Promise<EngineProgram> {
    const key = `${language}:${createHash('sha256').update(source).digest('hex')}`;
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      const program = this.#load().then((engines) => engines.compile(language, source));
      entry = { program, generation: this.#generation };
      this.#entries.set(key, entry);
      // A source that did not compile is tried again by the next snapshot (an engine may recover).
      program.catch(() => this.#entries.delete(key));
    }
    entry.generation = this.#generation;
    return entry.program;
  }

  /** A snapshot was installed: release what neither it nor the one before it uses. */
  installed(): void {
    for (const [key, entry] of this.#entries) {
      if (entry.generation < this.#generation - 1) {
        this.#entries.delete(key);
        entry.program.then((program) => program.release()).catch(() => undefined);
      }
    }
    this.#generation += 1;
  }

  async close(): Promise<void> {
    await (await this.#engines)?.close();
  }

  #load(): Promise<Engines> {
    this.#engines ??= import('@signet/policy-engines').then(({ createPolicyEngines }) =>
      createPolicyEngines({
        onEvent: (event) => {
          if (event.type === 'started') {
            this.#logger.info(
              { language: event.language, startupMs: Math.round(event.startupMs) },
              'policy engine started',
            );
          } else
            this.#logger.warn({ language: event.language, reason: event.reason }, 'policy engine stopped');
        },
      }),
    );
    return this.#engines;
  }
}
