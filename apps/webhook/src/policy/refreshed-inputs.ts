// What policy compiles read from outside the cluster: KMS public keys (`key.kms`) and trust roots
// served by TUF (the default root with --tuf-mirror, `remote` TrustRoots). Each is fetched when a
// policy first needs it and then refreshed on its own schedule, never per admission; a change
// recompiles, and the policies that use the key or root get a new fingerprint (policy/
// fingerprint.ts: no pass verified under the old key or root is reused). Failures keep the last good key or root and are logged and counted; a
// root is refreshed again when the metadata it was verified with expires, and dropped if the
// mirror has nothing newer (a frozen mirror). KMS endpoints and TUF mirrors are only those the
// operator allows (see ../outbound.ts).
import { readFile } from 'node:fs/promises';
import type { TrustRoot } from '@signet/k8s-types';
import {
  type KmsKeyEvent,
  type KmsKeyStore,
  type LivingRootEvent,
  type LivingTrustRoot,
  livingPublicGoodRoot,
  type RemoteTrustRoots,
} from '@signet/verifier';
import type { ServeConfig } from '../config.js';
import type { Part } from '../lifecycle/part.js';
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';
import { kmsKeyStore, type OutboundSettings, remoteTrustRoots } from '../outbound.js';

export interface RefreshedInputs {
  readonly kmsKeys: KmsKeyStore;
  readonly defaultRoot: LivingTrustRoot | undefined;
  readonly remoteRoots: RemoteTrustRoots;
  /** Bumped on every change of a key or root (a count; fingerprints read the keys and roots themselves). */
  readonly generation: number;
  /** Starts the refresh timers; `onChange` recompiles. Returns the function that stops them. */
  start(onChange: () => void): () => void;
  /** Forgets the `remote` roots (and their cache entries) of TrustRoots that no longer exist. */
  retain(trustRoots: readonly TrustRoot[]): Promise<void>;
}

type Config = Pick<ServeConfig, 'kmsRefreshMs' | 'tuf'> & {
  /** The operator's allowances (--private-host, --kms-endpoint); none when absent. */
  readonly registries?: OutboundSettings;
};

/** The refresh timers as a part: each change calls `onChange` (which compiles the policies again). */
export function refreshing(inputs: RefreshedInputs, onChange: () => void): Part {
  let stopTimers: (() => void) | undefined;
  return {
    name: 'KMS key and trust root refresh',
    start: () => {
      stopTimers = inputs.start(onChange);
    },
    stop: () => stopTimers?.(),
  };
}

/** A root is refreshed at most this soon again when its metadata is about to expire. */
const MIN_REFRESH_MS = 5_000;

/**
 * Makes the stores. With --tuf-mirror, the default root starts from the on-disk cache if it still
 * verifies (and is refreshed in the background once the timers start), else it is refreshed once
 * before the first compile (bounded by the 10 s TUF deadline) with the embedded root (or nothing,
 * for a private root) as what stays in use if that fails.
 */
export async function createRefreshedInputs(
  config: Config,
  logger: Logger,
  metrics: SignetMetrics,
): Promise<RefreshedInputs> {
  const staleKeys = new Set<string>();
  const staleRoots = new Map<string, string>();
  const onRoot = rootObserver(logger, metrics, staleRoots);
  const tuf = config.tuf;
  const allowed = config.registries ?? { privateHosts: [], kmsEndpoints: [] };
  const cache = tuf.cacheDir === undefined ? {} : { cacheDir: tuf.cacheDir };
  const defaultRoot =
    tuf.mirror === undefined
      ? undefined
      : await livingPublicGoodRoot({
          mirror: tuf.mirror,
          ...(tuf.rootFile === undefined ? {} : { root: await readFile(tuf.rootFile) }),
          ...cache,
          onEvent: onRoot,
        });
  if (defaultRoot !== undefined && !(await defaultRoot.loadCache())) await defaultRoot.refresh();
  const inputs = {
    kmsKeys: kmsKeyStore(allowed, {
      refreshIntervalMs: config.kmsRefreshMs,
      onEvent: kmsObserver(logger, metrics, staleKeys),
    }),
    defaultRoot,
    remoteRoots: remoteTrustRoots(allowed, { ...cache, onEvent: onRoot }),
    generation: 0,
    start(onChange: () => void) {
      const changed = (refreshed: boolean) => {
        if (!refreshed) return;
        inputs.generation += 1;
        onChange();
      };
      const kms = setInterval(() => void inputs.kmsKeys.refresh().then(changed), config.kmsRefreshMs);
      kms.unref();
      const refreshRoots = () =>
        Promise.all([inputs.defaultRoot?.refresh() ?? false, inputs.remoteRoots.refresh()]).then((r) =>
          changed(r.some(Boolean)),
        );
      // Every --tuf-refresh, and sooner when a root's metadata expires before that: the mirror is
      // asked then, and a root whose metadata expired with nothing newer stops being trusted.
      let roots: NodeJS.Timeout | undefined;
      let stopped = false;
      const schedule = () => {
        if (stopped) return;
        const expiries = [inputs.defaultRoot?.expiresAt, inputs.remoteRoots.earliestExpiry()].flatMap((d) =>
          d === undefined ? [] : [d.getTime() - Date.now()],
        );
        const delay = Math.max(MIN_REFRESH_MS, Math.min(tuf.refreshMs, ...expiries));
        roots = setTimeout(() => void refreshRoots().then(schedule), delay);
        roots.unref();
      };
      // Started from the cache (the mirror was not asked): ask it now, in the background.
      if (inputs.defaultRoot?.source === 'cache') void refreshRoots().then(schedule);
      else schedule();
      return () => {
        stopped = true;
        clearInterval(kms);
        clearTimeout(roots);
      };
    },
    async retain(trustRoots: readonly TrustRoot[]) {
      await inputs.remoteRoots.retain(trustRoots);
      const names = new Set(trustRoots.map((root) => root.metadata.name));
      for (const name of staleRoots.keys()) {
        if (name !== defaultRoot?.name && !names.has(name)) staleRoots.delete(name);
      }
      countStale(metrics, staleRoots);
    },
  };
  return inputs;
}

function kmsObserver(logger: Logger, metrics: SignetMetrics, stale: Set<string>) {
  return (event: KmsKeyEvent): void => {
    if (event.kind === 'fetched') {
      metrics.kmsFetches.inc({ result: 'ok' });
      stale.delete(event.uri);
      logger.info(
        { kms: event.uri, ms: Math.round(event.durationMs), changed: event.changed },
        'KMS key fetched',
      );
    } else {
      metrics.kmsFetches.inc({ result: 'failed' });
      if (event.lastGoodAt !== undefined) stale.add(event.uri);
      const kept = event.lastGoodAt
        ? `keeping the key fetched at ${event.lastGoodAt.toISOString()}`
        : 'no key yet';
      logger.error({ kms: event.uri, err: event.error }, `KMS key refresh failed: ${kept}`);
    }
    metrics.kmsKeysStale.set(stale.size);
  };
}

/** What a root's staleness label says is in use instead of a fresh root. */
function usingLabel(using: LivingRootEvent & { kind: 'failed' }): string {
  return using.using === 'mirror' ? 'last_good' : using.using;
}

function countStale(metrics: SignetMetrics, stale: ReadonlyMap<string, string>): void {
  metrics.trustRootsStale.reset();
  for (const using of ['last_good', 'cache', 'fallback', 'none']) {
    metrics.trustRootsStale.set({ using }, [...stale.values()].filter((u) => u === using).length);
  }
}

function rootObserver(logger: Logger, metrics: SignetMetrics, stale: Map<string, string>) {
  return (event: LivingRootEvent): void => {
    if (event.kind === 'refreshed') {
      metrics.trustRootRefreshes.inc({ result: 'ok' });
      stale.delete(event.name);
      const ms = Math.round(event.durationMs);
      logger.info({ trustRoot: event.name, ms, changed: event.changed }, 'trust root refreshed');
    } else {
      metrics.trustRootRefreshes.inc({ result: event.expired ? 'expired' : 'failed' });
      stale.set(event.name, usingLabel(event));
      const using =
        event.using === 'none'
          ? 'no root to use'
          : `keeping the ${event.using === 'mirror' ? 'last good' : event.using} root`;
      const frozen = event.expired ? ' (the mirror serves expired metadata)' : '';
      logger.error(
        { trustRoot: event.name, err: event.error },
        `trust root refresh failed${frozen}: ${using}`,
      );
    }
    countStale(metrics, stale);
  };
}
