// Sends an AdmissionReview straight to a webhook, as the API server would: for checks that must
// not depend on a webhook configuration (a webhook that is not registered yet, or not ready).
import { request } from 'node:https';

export interface ReviewAnswer {
  readonly allowed: boolean;
  readonly message: string | undefined;
  readonly warnings: readonly string[];
}

/** An `admission.k8s.io/v1` review of a Pod CREATE running `image`. */
export function podCreateReview(namespace: string, name: string, image: string): object {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: { containers: [{ name: 'app', image }] },
  };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `e2e-${Date.now()}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name,
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'signet-e2e', groups: ['system:authenticated'] },
      object: pod,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  };
}

/** POSTs `review` to `<url><path>` over TLS verified with `caPem`; resolves with the response. */
export function sendReview(
  url: string,
  path: '/validate' | '/mutate',
  caPem: string,
  review: object,
): Promise<ReviewAnswer> {
  const body = JSON.stringify(review);
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}?timeout=10s`,
      { method: 'POST', ca: caPem, headers: { 'content-type': 'application/json' }, timeout: 15_000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          try {
            const parsed = JSON.parse(text) as {
              response?: { allowed?: boolean; status?: { message?: string }; warnings?: string[] };
            };
            resolve({
              allowed: parsed.response?.allowed === true,
              message: parsed.response?.status?.message,
              warnings: parsed.response?.warnings ?? [],
            });
          } catch (error) {
            reject(
              new Error(`HTTP ${res.statusCode}: not an AdmissionReview: ${text.slice(0, 200)}`, {
                cause: error,
              }),
            );
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('the webhook did not answer within 15 s')));
    req.on('error', reject);
    req.end(body);
  });
}
