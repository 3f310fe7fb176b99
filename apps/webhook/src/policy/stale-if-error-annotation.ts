// A policy's own stale-if-error grace period: the annotation `signet.dev/stale-if-error` on a
// ClusterImagePolicy or ImagePolicy (the one `signet.dev/` annotation left out of its fingerprint:
// changing the grace period keeps its records valid).
import type { ClusterImagePolicy, ImagePolicy } from '@signet/k8s-types';
import { parseGoDuration } from '../http/duration.js';

/** The annotation that sets a policy's stale-if-error grace period (a duration; 0 turns it off). */
export const STALE_IF_ERROR_ANNOTATION = 'signet.dev/stale-if-error';

/** Longest grace period an annotation may set: the records are collected after this long anyway. */
export const MAX_STALE_IF_ERROR_MS = 30 * 24 * 3_600_000;

/**
 * The policy's own grace period: `undefined` without the annotation, 0 for a value that is not a
 * duration of at most 30 days (never longer than asked: an unreadable value turns it off).
 */
export function staleIfErrorOf(policy: ClusterImagePolicy | ImagePolicy): number | undefined {
  const value = policy.metadata.annotations?.[STALE_IF_ERROR_ANNOTATION];
  if (value === undefined) return undefined;
  const ms = parseGoDuration(value.trim());
  return ms === undefined || ms > MAX_STALE_IF_ERROR_MS ? 0 : ms;
}
