// What the parsers of Signet's namespaced objects share: the apiVersion and kind check, metadata
// with its namespace (the object's own, or the one a file's objects default to) and creation time.
import { type Fail, type JsonObject, join, optionalString } from '../fields.js';
import { type NamespacedObjectMeta, SIGNET_POLICY_API_VERSION } from './namespaced-types.js';
import { parseMetadata } from './parse.js';

/** A namespace name: a DNS label (RFC 1123). */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** RFC 3339 as Kubernetes writes times (seconds, optional fraction, `Z` or an offset). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** `Kind/namespace/name` (or `Kind/name`) for error messages, when the body has a readable name. */
export function namespacedLabel(kind: string, body: unknown): string | undefined {
  const meta = (body as { metadata?: { name?: unknown; namespace?: unknown } } | null)?.metadata;
  if (typeof meta?.name !== 'string') return undefined;
  return typeof meta.namespace === 'string'
    ? `${kind}/${meta.namespace}/${meta.name}`
    : `${kind}/${meta.name}`;
}

export function checkTypeMeta(root: JsonObject, kind: string, fail: Fail): void {
  if (root.apiVersion !== SIGNET_POLICY_API_VERSION) {
    fail(
      'apiVersion',
      `must be "${SIGNET_POLICY_API_VERSION}", got ${JSON.stringify(root.apiVersion ?? null)}`,
    );
  }
  if (root.kind !== kind) fail('kind', `must be "${kind}", got ${JSON.stringify(root.kind ?? null)}`);
}

/**
 * Metadata of a namespaced object: `metadata.namespace`, else `fallbackNamespace` (the namespace a
 * file's objects default to, as kubectl's), else an error.
 */
export function parseNamespacedMetadata(
  root: JsonObject,
  fail: Fail,
  fallbackNamespace: string | undefined,
): NamespacedObjectMeta {
  const base = parseMetadata(root, fail);
  const meta = root.metadata as JsonObject;
  const written = optionalString(meta, 'namespace', 'metadata', fail);
  const namespace = written === undefined || written === '' ? fallbackNamespace : written;
  if (namespace === undefined) return fail('metadata.namespace', 'required string');
  if (!NAMESPACE.test(namespace)) {
    fail('metadata.namespace', `must be a namespace name (RFC 1123 label), got ${JSON.stringify(namespace)}`);
  }
  const created = optionalString(meta, 'creationTimestamp', 'metadata', fail);
  if (created !== undefined) timestampMs(created, join('metadata', 'creationTimestamp'), fail);
  return { ...base, namespace, ...(created === undefined ? {} : { creationTimestamp: created }) };
}

/** Milliseconds since the epoch of an RFC 3339 time; fails naming `path` otherwise. */
export function timestampMs(value: string, path: string, fail: Fail): number {
  const ms = RFC3339.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    fail(path, `must be an RFC 3339 time such as 2026-07-01T00:00:00Z, got ${JSON.stringify(value)}`);
  }
  return ms;
}
