// Types of Signet's own namespaced policy objects (`policy.signet.dev/v1alpha1`): an ImagePolicy,
// which a namespace's team writes and which can only add requirements for images admitted in its
// namespace, and an ImagePolicyException, which removes named policies' requirements for named
// images until it expires. Neither exists in sigstore policy-controller.
import type { ClusterImagePolicySpec, PolicyObjectMeta } from './types.js';

export const SIGNET_POLICY_GROUP = 'policy.signet.dev';
export const SIGNET_POLICY_API_VERSION = `${SIGNET_POLICY_GROUP}/v1alpha1` as const;

export interface NamespacedObjectMeta extends PolicyObjectMeta {
  readonly namespace: string;
  /** RFC 3339; set by the API server when the object is created, absent in files. */
  readonly creationTimestamp?: string;
}

export interface ImagePolicy {
  readonly apiVersion: typeof SIGNET_POLICY_API_VERSION;
  readonly kind: 'ImagePolicy';
  readonly metadata: NamespacedObjectMeta;
  readonly spec: ImagePolicySpec;
}

/**
 * The ClusterImagePolicy spec minus what only a cluster admin may set: the parser refuses
 * `mode: warn`, `static: pass`, `kms` keys, `policy.remote` and Secret or ConfigMap references
 * to another namespace (see ADR 0024).
 */
export interface ImagePolicySpec extends Omit<ClusterImagePolicySpec, 'mode'> {
  readonly mode?: 'enforce';
}

/** Which images an exception covers: a policy-controller glob, or one content digest in any repository. */
export type ExceptionImage = { readonly glob: string } | { readonly digest: string };

export const EXEMPTABLE_KINDS = ['ClusterImagePolicy', 'ImagePolicy'] as const;
export type ExemptableKind = (typeof EXEMPTABLE_KINDS)[number];

/** A policy an exception exempts from; an ImagePolicy is one of the exception's own namespace. */
export interface ExemptedPolicy {
  readonly kind: ExemptableKind;
  readonly name: string;
}

export interface ImagePolicyException {
  readonly apiVersion: typeof SIGNET_POLICY_API_VERSION;
  readonly kind: 'ImagePolicyException';
  readonly metadata: NamespacedObjectMeta;
  readonly spec: ImagePolicyExceptionSpec;
}

export interface ImagePolicyExceptionSpec {
  readonly images: readonly ExceptionImage[];
  readonly policies: readonly ExemptedPolicy[];
  /** Why the exception exists; shown in every warning it causes. */
  readonly reason: string;
  /** RFC 3339: from then on the exception applies to nothing. */
  readonly expires: string;
}

/** Bounds of an exception's lists and texts (the CRD says the same). */
export const EXCEPTION_LIMITS = { images: 64, policies: 32, reason: 1024 } as const;
