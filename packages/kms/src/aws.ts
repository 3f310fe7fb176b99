// AWS KMS: `GetPublicKey` with the AWS SDK's default credential chain (environment, shared config
// and SSO, IRSA web identity, EKS Pod Identity and ECS container credentials, instance metadata)
// and its default region chain unless the key's ARN names the region. An endpoint in the URI is
// called over https, as cosign does; without one, the SDK's endpoint settings apply (including
// `AWS_ENDPOINT_URL_KMS`).
import type { KmsPublicKey } from '@signet/verifier';
import { pemFromSpki } from './public-key.js';
import type { KmsKeyRef } from './uri.js';

export type AwsKeyRef = Extract<KmsKeyRef, { provider: 'aws' }>;

export interface AwsOptions {
  /** Extra CA certificates (PEM) for the endpoint's TLS, e.g. a VPC endpoint behind a private CA. */
  readonly ca?: string;
}

const HASH_OF_KEY_SPEC: Readonly<Record<string, string>> = {
  ECC_NIST_P256: 'sha256',
  ECC_SECG_P256K1: 'sha256',
  ECC_NIST_P384: 'sha384',
  ECC_NIST_P521: 'sha512',
};

export async function fetchAwsKey(
  ref: AwsKeyRef,
  signal: AbortSignal,
  options: AwsOptions = {},
): Promise<KmsPublicKey> {
  // Loaded on first use: callers that name no AWS key never load the SDK.
  const { GetPublicKeyCommand, KMSClient } = await import('@aws-sdk/client-kms');
  const requestHandler = options.ca === undefined ? undefined : await handlerTrusting(options.ca);
  const client = new KMSClient({
    ...(requestHandler === undefined ? {} : { requestHandler }),
    ...(ref.region === undefined ? {} : { region: ref.region }),
    ...(ref.endpoint === undefined ? {} : { endpoint: `https://${ref.endpoint}` }),
    // The store refreshes on its own schedule; one attempt per fetch keeps its deadline honest.
    maxAttempts: 1,
  });
  try {
    const answer = await client.send(new GetPublicKeyCommand({ KeyId: ref.keyId }), { abortSignal: signal });
    if (answer.PublicKey === undefined) throw new Error('GetPublicKey returned no PublicKey');
    if (answer.KeyUsage !== undefined && answer.KeyUsage !== 'SIGN_VERIFY') {
      throw new Error(`key usage is ${answer.KeyUsage}, not SIGN_VERIFY`);
    }
    return {
      pem: pemFromSpki(answer.PublicKey),
      hashAlgorithm: hashOf(answer.KeySpec, answer.SigningAlgorithms),
    };
  } finally {
    client.destroy();
  }
}

function hashOf(keySpec: string | undefined, algorithms: readonly string[] | undefined): string | undefined {
  const byCurve = keySpec === undefined ? undefined : HASH_OF_KEY_SPEC[keySpec];
  if (byCurve !== undefined) return byCurve;
  // RSA keys: the first signing algorithm names the digest (RSASSA_PKCS1_V1_5_SHA_256, ...).
  const digest = /SHA_(256|384|512)$/.exec(algorithms?.[0] ?? '')?.[1];
  return digest === undefined ? undefined : `sha${digest}`;
}

async function handlerTrusting(ca: string) {
  const { NodeHttpHandler } = await import('@smithy/node-http-handler');
  const { Agent } = await import('node:https');
  return new NodeHttpHandler({ httpsAgent: new Agent({ ca }) });
}
