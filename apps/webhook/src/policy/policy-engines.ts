// The CUE and Rego engines as admission uses them: loaded on the first CUE or Rego policy (a
// cluster without one never imports @signet/policy-engines, starts no worker, maps no WebAssembly),
// and compiled once per policy source: every snapshot recompiles all policies, and an unchanged
// policy gets the program it already has.
//
// What is kept is bounded by the snapshots that use it, not by time or by how many compiles came:
// each snapshot compile is a session, and a program lives while a session that compiled it does.
// A session lives while it compiles, then as the installed snapshot or the one before it
// (admissions still running on that one keep their programs); a compile that is not installed
// (a newer view came first) ends at once. So with policy files, where one snapshot stays for
// good, the engines keep that snapshot's programs and nothing more. `POST /validate-policy` never
// compiles here (it has its own engines, see validation-capacity.ts).
import { createHash } from 'node:crypto';
import type { EngineLanguage, EngineProgram, PolicyEngineHost } from '@signet/verifier';
import type { Logger } from '../logger.js';

type Engines = import('@signet/policy-engines').PolicyEngines;
type EnginePolicy = import('@signet/policy-engines').EnginePolicy;

interface Entry {
  readonly program: Promise<EnginePolicy>;
  /** The sessions that compiled it; released when the last one ends. */
  readonly users: Set<EngineSession>;
}

/** One snapshot compile's view of the engines: what it compiles is kept while it lives. */
export class EngineSession implements PolicyEngineHost {
  readonly #owner: WebhookPolicyEngines;
  readonly keys = new Set<string>();

  constructor(owner: WebhookPolicyEngines) {
    this.#owner = owner;
  }

  compile(language: EngineLanguage, source: string): Promise<EngineProgram> {
    return this.#owner.compileFor(this, language, source);
  }
}

export interface WebhookPolicyEnginesOptions {
  /** Added to the engines' worker threads' nice value (default 0: unchanged). */
  readonly threadNiceness?: number;
}

export class WebhookPolicyEngines implements PolicyEngineHost {
  readonly #logger: Logger;
  readonly #threadNiceness: number;
  #engines: Promise<Engines> | undefined;
  readonly #entries = new Map<string, Entry>();
  /** What `compile` (outside any session: the one-shot commands) keeps, until `close`. */
  readonly #unsessioned = new EngineSession(this);
  #installed: EngineSession | undefined;
  #previous: EngineSession | undefined;

  constructor(logger: Logger, options: WebhookPolicyEnginesOptions = {}) {
    this.#logger = logger;
    this.#threadNiceness = options.threadNiceness ?? 0;
  }

  /** Whether a CUE or Rego policy was ever compiled (the engines were loaded). */
  get loaded(): boolean {
    return this.#engines !== undefined;
  }

  /** Programs kept now (distinct sources). */
  get programs(): number {
    return this.#entries.size;
  }

  /** Programs the engines themselves keep now (released ones are gone). */
  async retained(): Promise<number> {
    if (this.#engines === undefined) return 0;
    const programs = (await this.#engines).programs();
    return programs.cue + programs.rego;
  }

  /** For `signet verify`, `audit`, `migrate`: one compile, kept for the life of the command. */
  compile(language: EngineLanguage, source: string): Promise<EngineProgram> {
    return this.compileFor(this.#unsessioned, language, source);
  }

  /** A session for one snapshot compile; end it with `installed` or `discard`. */
  session(): EngineSession {
    return new EngineSession(this);
  }

  /** `session`'s snapshot was installed: it and the one before it keep their programs, older ones go. */
  installed(session: EngineSession): void {
    const older = this.#previous;
    this.#previous = this.#installed;
    this.#installed = session;
    if (older !== undefined) this.#end(older);
  }

  /** `session`'s snapshot was not installed (a newer one came first): what only it used goes. */
  discard(session: EngineSession): void {
    this.#end(session);
  }

  /** @internal The compile of `session`. */
  compileFor(session: EngineSession, language: EngineLanguage, source: string): Promise<EngineProgram> {
    const key = `${language}:${createHash('sha256').update(source).digest('hex')}`;
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      const program = this.#load().then((engines) => engines.compile(language, source));
      const created: Entry = { program, users: new Set() };
      entry = created;
      this.#entries.set(key, created);
      // A source that did not compile is tried again by the next snapshot (an engine may recover).
      program.catch(() => {
        if (this.#entries.get(key) === created) this.#entries.delete(key);
      });
    }
    entry.users.add(session);
    session.keys.add(key);
    return entry.program;
  }

  async close(): Promise<void> {
    await (await this.#engines)?.close();
  }

  #end(session: EngineSession): void {
    for (const key of session.keys) {
      const entry = this.#entries.get(key);
      if (entry === undefined || !entry.users.delete(session) || entry.users.size > 0) continue;
      this.#entries.delete(key);
      entry.program.then((program) => program.release()).catch(() => undefined);
    }
    session.keys.clear();
  }

  #load(): Promise<Engines> {
    this.#engines ??= import('@signet/policy-engines').then(({ createPolicyEngines }) =>
      createPolicyEngines({
        threadNiceness: this.#threadNiceness,
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
