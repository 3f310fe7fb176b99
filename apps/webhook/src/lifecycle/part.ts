// The contract every long-lived piece of a running Signet keeps (servers, watches, refresh timers,
// worker pools, status writing, the background scan), so that one owner starts them in order and
// stops them in reverse (lifecycle.ts), and one elector runs the leader-only ones (leader-elector.ts).

/** The Lease a leader-only part needs: it runs only while this replica holds it. */
export interface Election {
  /** The Lease's name, in Signet's namespace. */
  readonly lease: string;
  /** How long a holder that stopped renewing keeps it (renewed every third of that). */
  readonly durationMs: number;
}

export interface Part {
  /** What it is, for the log: `policy watches`, `admission and operations ports`. */
  readonly name: string;
  /**
   * Set on a leader-only part: it is started when this replica takes the Lease and stopped when
   * it loses it (or stops), as often as that happens. Unset: it runs on every replica.
   */
  readonly leader?: Election;
  /**
   * Starts the part; resolves once it does its job (a listening server, a first certificate;
   * what it resolves to is the part's own business). `signal` aborts when the part is to stop:
   * work it began may end early then.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a start is synchronous, or a promise of anything.
  start(signal: AbortSignal): Promise<unknown> | void;
  /**
   * Stops the part and resolves when what it began has finished. `graceMs` is how long it may let
   * work it accepted finish (the servers' in-flight reviews); most parts have none and ignore it.
   */
  stop(graceMs: number): Promise<void> | void;
}
