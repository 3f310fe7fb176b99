// The verification records as `signet audit` reads them: listed once (no watch), with the key read
// from its Secret (never created), so that the audit's drain risk says what the webhook would do
// with them now. Whoever runs the audit needs to read both in Signet's namespace; without them the
// audit says so and judges without records.
import type { PassRecord } from '@signet/core';
import type { GraceRecords } from '../admission/grace.js';
import type { KubeApi } from '../kube/kube-api.js';
import { statusOf } from '../kube/kube-errors.js';
import { type ListPage, listAll, PAGE_SIZE } from '../kube/lists.js';
import {
  passRecordOf,
  RECORD_GROUP,
  RECORD_PLURAL,
  RECORD_VERSION,
  type RecordObject,
  readRecord,
  recordAbout,
  recordName,
} from './record-format.js';

const CALL_TIMEOUT_MS = 30_000;
const KEY_FIELD = 'hmac-key';

export type ListedRecords =
  | { readonly grace: GraceRecords; readonly count: number }
  /** No records in use here (no key Secret, or the CRD is not served): nothing to count, nothing to say. */
  | { readonly none: true }
  /** Records may be in use but cannot be read (RBAC, the API server): said once. */
  | { readonly unavailable: string };

export async function listGraceRecords(
  api: KubeApi,
  options: { readonly namespace: string; readonly keySecret: string; readonly graceMs: number },
): Promise<ListedRecords> {
  const { namespace, keySecret } = options;
  let key: Buffer;
  try {
    const secret = await api.core.readNamespacedSecret(
      { name: keySecret, namespace },
      api.deadline(CALL_TIMEOUT_MS),
    );
    key = Buffer.from(secret.data?.[KEY_FIELD] ?? '', 'base64');
  } catch (error) {
    if (statusOf(error) === 404) return { none: true };
    return {
      unavailable: `cannot read the records key Secret ${namespace}/${keySecret}: ${(error as Error).message}`,
    };
  }
  if (key.length < 32) return { unavailable: `Secret ${namespace}/${keySecret} holds no records key` };
  let items: RecordObject[];
  try {
    ({ items } = await listAll(
      (token) =>
        api.customObjects.listNamespacedCustomObject(
          {
            group: RECORD_GROUP,
            version: RECORD_VERSION,
            namespace,
            plural: RECORD_PLURAL,
            limit: PAGE_SIZE,
            ...(token ? { _continue: token } : {}),
          },
          api.deadline(CALL_TIMEOUT_MS),
        ) as Promise<ListPage<RecordObject>>,
      10_000,
    ));
  } catch (error) {
    if (statusOf(error) === 404) return { none: true };
    return { unavailable: `cannot list the verification records: ${(error as Error).message}` };
  }
  const byName = new Map<string, RecordObject>();
  for (const item of items) {
    const name = item.metadata?.name;
    if (typeof name === 'string') byName.set(name, item);
  }
  const find = (policy: string, fingerprint: string, image: string): PassRecord | undefined => {
    const object = byName.get(recordName(policy, fingerprint, image));
    const read = object === undefined ? undefined : readRecord(key, namespace, object);
    const fields = recordAbout(read, policy, fingerprint, image);
    return fields === undefined ? undefined : passRecordOf(fields);
  };
  return {
    count: byName.size,
    grace: { defaultGraceMs: options.graceMs, find, graced: () => undefined, refused: () => undefined },
  };
}
