// The apply-time check policy-controller makes of `key.kms`: a supported provider prefix and, for
// AWS, a key or alias ARN (key IDs and alias names alone are refused, as upstream refuses them).
// Fetching is the verifier's business; this only keeps a policy from being accepted that no
// policy-controller would accept.

const PROVIDERS = ['awskms://', 'azurekms://', 'hashivault://', 'gcpkms://'] as const;
const AWS_UUID = 'm?r?k?-?[A-Fa-f0-9]{8}-?[A-Fa-f0-9]{4}-?[A-Fa-f0-9]{4}-?[A-Fa-f0-9]{4}-?[A-Fa-f0-9]{12}';
const AWS_ARN = 'arn:(?:aws|aws-us-gov|aws-cn):kms:[a-z0-9-]+:\\d{12}:';
const AWS_ARN_FORMS = [
  new RegExp(`^awskms://[^/]*/${AWS_ARN}key/${AWS_UUID}$`),
  new RegExp(`^awskms://[^/]*/${AWS_ARN}alias/.*$`),
];
const HOST_PORT = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:]+\]):\d{1,5}$/;

/** Why `uri` is not a KMS reference policy-controller accepts, or `undefined` when it is one. */
export function kmsUriProblem(uri: string): string | undefined {
  if (!PROVIDERS.some((prefix) => uri.startsWith(prefix))) {
    return `unsupported KMS ${JSON.stringify(uri)}: must start with one of ${PROVIDERS.join(', ')}`;
  }
  if (!uri.startsWith('awskms://')) return undefined;
  if (!AWS_ARN_FORMS.some((form) => form.test(uri))) {
    return `${JSON.stringify(uri)} must be awskms://[ENDPOINT]/<key or alias ARN> (arn:aws:kms:REGION:ACCOUNT:key/ID or ...:alias/NAME)`;
  }
  const endpoint = uri.slice('awskms://'.length).split('/')[0] ?? '';
  if (endpoint !== '' && !HOST_PORT.test(endpoint)) {
    return `${JSON.stringify(uri)} has a malformed endpoint ${JSON.stringify(endpoint)}: expected host:port`;
  }
  return undefined;
}
