// Registry credentials for one admission, as the kubelet would use them: the pod spec's
// `imagePullSecrets`, its ServiceAccount's, and the matching policies' `signaturePullSecrets`, all
// read in the admitted object's namespace.
import type { ImageCheck } from '@signet/core';
import { type AdmissionRequest, podSpecOf, workloadForKind } from '@signet/k8s-types';
import { type CredentialSource, credentialsFromSecret, Keychain } from '@signet/registry';
import type { Logger } from '../logger.js';
import type { SnapshotPolicy } from '../policy/policy-store.js';

/** The port admission needs to read pull secrets; `KubePullSecretLookup` implements it on a cluster. */
export interface PullSecretLookup {
  /** The Secret object as the API returns it (base64 `data`), or `undefined` when it does not exist. */
  secret(namespace: string, name: string): Promise<Record<string, unknown> | undefined>;
  /** Names of the ServiceAccount's `imagePullSecrets` (empty when it does not exist). */
  serviceAccountPullSecrets(namespace: string, name: string): Promise<string[]>;
}

/**
 * The keychain for `request`, or `undefined` when there is nothing to read (no lookup, nothing
 * to verify, no secrets). Unreadable Secrets are skipped with a warning, as the kubelet skips them.
 */
export async function admissionCredentials(
  lookup: PullSecretLookup | undefined,
  request: AdmissionRequest,
  checks: readonly ImageCheck<SnapshotPolicy>[],
  logger: Logger,
): Promise<CredentialSource | undefined> {
  const namespace = request.namespace;
  if (lookup === undefined || namespace === undefined || !checks.some((c) => c.kind === 'verify'))
    return undefined;
  return namespaceCredentials(lookup, namespace, request, checks, logger);
}

async function namespaceCredentials(
  lookup: PullSecretLookup,
  namespace: string,
  request: AdmissionRequest,
  checks: readonly ImageCheck<SnapshotPolicy>[],
  logger: Logger,
): Promise<CredentialSource | undefined> {
  const { names, account } = pullSecretNames(request, checks);
  try {
    for (const name of await lookup.serviceAccountPullSecrets(namespace, account)) names.add(name);
  } catch (error) {
    logger.warn(
      { uid: request.uid, err: error },
      'cannot read the ServiceAccount; its pull secrets are not used',
    );
  }
  const secrets = await Promise.all(
    [...names].map((name) =>
      lookup.secret(namespace, name).catch((error: unknown) => {
        logger.warn(
          { uid: request.uid, secret: `${namespace}/${name}`, err: error },
          'cannot read a pull secret',
        );
        return undefined;
      }),
    ),
  );
  const entries = secrets.flatMap((secret) => {
    if (secret === undefined) return [];
    try {
      return credentialsFromSecret(secret);
    } catch (error) {
      // The kubelet ignores a Secret it cannot use as a pull secret; so does Signet, but says so.
      logger.warn({ uid: request.uid, err: error }, 'ignoring a pull secret');
      return [];
    }
  });
  return entries.length === 0 ? undefined : new Keychain(entries);
}

/** Pull secret names from the pod spec and the matching policies, and the pod's ServiceAccount. */
function pullSecretNames(
  request: AdmissionRequest,
  checks: readonly ImageCheck<SnapshotPolicy>[],
): { names: Set<string>; account: string } {
  const info = workloadForKind(request.kind.group, request.kind.kind);
  const spec = info && request.object ? podSpecOf(info, request.object) : undefined;
  const names = new Set<string>();
  const refs: unknown = spec?.imagePullSecrets;
  for (const ref of Array.isArray(refs) ? refs : []) {
    if (typeof ref?.name === 'string') names.add(ref.name);
  }
  const sources = checks
    .flatMap((check) => (check.kind === 'verify' ? check.policies : []))
    .flatMap((policy) => policy.compiled.authorities)
    .flatMap((authority) => authority.sources);
  for (const source of sources) for (const name of source.signaturePullSecrets) names.add(name);
  const account = typeof spec?.serviceAccountName === 'string' ? spec.serviceAccountName : 'default';
  return { names, account };
}
