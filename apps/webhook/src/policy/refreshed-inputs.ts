// What policy compiles read from outside the cluster: KMS public keys (`key.kms`) and trust roots
// served by TUF (the default root with --tuf-mirror, `remote` TrustRoots). Each is fetched when a
// policy first needs it and then refreshed on its own schedule, never per admission; a change
// bumps the generation (new policy revisions, so no pass cached under the old key or root is
// reused) and recompiles. Failures keep the last good key or root and are logged and counted.
import { readFile } from 'node:fs/promises';
import { createKmsKeyFetcher, parseKmsUri } from '@signet/kms';
import {
  type KmsKeyEvent,
  KmsKeyStore,
  type LivingRootEvent,
  type LivingTrustRoot,
  livingPublicGoodRoot,
  RemoteTrustRoots,
} from '@signet/verifier';
import type { ServeConfig } from '../commands/serve-config.js';
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';

export interface RefreshedInputs {
  readonly kmsKeys: KmsKeyStore;
  readonly defaultRoot: LivingTrustRoot | undefined;
  readonly remoteRoots: RemoteTrustRoots;
  /** Bumped on every change of a key or root. */
  readonly generation: number;
  /** Starts the refresh timers; `onChange` recompiles. Returns the function that stops them. */
  start(onChange: () => void): () => void;
}

type Config = Pick<ServeConfig, 'kmsRefreshMs' | 'tuf'>;

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
  const staleRoots = new Set<string>();
  const onRoot = rootObserver(logger, metrics, staleRoots);
  const tuf = config.tuf;
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
    kmsKeys: new KmsKeyStore({
      fetcher: createKmsKeyFetcher(),
      // What apply-time validation checks of a `key.kms`, without fetching it.
      checkUri: (uri) => void parseKmsUri(uri),
      refreshIntervalMs: config.kmsRefreshMs,
      onEvent: kmsObserver(logger, metrics, staleKeys),
    }),
    defaultRoot,
    remoteRoots: new RemoteTrustRoots({ ...cache, onEvent: onRoot }),
    generation: 0,
    start(onChange: () => void) {
      const changed = (refreshed: boolean) => {
        if (!refreshed) return;
        inputs.generation += 1;
        onChange();
      };
      const kms = setInterval(() => void inputs.kmsKeys.refresh().then(changed), config.kmsRefreshMs);
      const refreshRoots = () => {
        void Promise.all([inputs.defaultRoot?.refresh() ?? false, inputs.remoteRoots.refresh()]).then((r) =>
          changed(r.some(Boolean)),
        );
      };
      const roots = setInterval(refreshRoots, tuf.refreshMs);
      // Started from the cache (the mirror was not asked): ask it now, in the background.
      if (inputs.defaultRoot?.source === 'cache') refreshRoots();
      kms.unref();
      roots.unref();
      return () => {
        clearInterval(kms);
        clearInterval(roots);
      };
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

function rootObserver(logger: Logger, metrics: SignetMetrics, stale: Set<string>) {
  return (event: LivingRootEvent): void => {
    if (event.kind === 'refreshed') {
      metrics.trustRootRefreshes.inc({ result: 'ok' });
      stale.delete(event.name);
      const ms = Math.round(event.durationMs);
      logger.info({ trustRoot: event.name, ms, changed: event.changed }, 'trust root refreshed');
    } else {
      metrics.trustRootRefreshes.inc({ result: 'failed' });
      stale.add(event.name);
      const using =
        event.using === 'none'
          ? 'no root to use'
          : `keeping the ${event.using === 'mirror' ? 'last good' : event.using} root`;
      logger.error({ trustRoot: event.name, err: event.error }, `trust root refresh failed: ${using}`);
    }
    metrics.trustRootsStale.set(stale.size);
  };
}
