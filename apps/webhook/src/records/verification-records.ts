// Verification records, as two parts of a running Signet (cluster mode, `--verification-records`;
// ADR 0023): this one, on every replica, holds the key, the informer and the batched writer; its
// `collector` is a leader-only part of its own, on the policy status Lease. The admission pipeline
// sees two faces: the verifier's shared cache (`passes`: a pass any replica verified within the
// cache TTL is reused instead of asking the registry) and stale-if-error (`grace`: a record within
// the grace period admits an image the registry cannot be asked about now, with a warning, an
// Event on the Pod's owner and a metric). It starts before the ports and stops after them, so the
// passes of the last in-flight reviews are still written.
import {
  CLOCK_SKEW_MS,
  formatAge,
  type GracedPolicy,
  type GraceRefusal,
  type PassRecord,
} from '@signet/core';
import { type AdmissionRequest, controllerOf } from '@signet/k8s-types';
import type { DigestRef } from '@signet/registry';
import type { CompiledAuthorities, PassRecords, PolicyCheck, RecordedPass } from '@signet/verifier';
import type { GraceRecords } from '../admission/grace.js';
import type { KubeApi } from '../kube/kube-api.js';
import type { Election, Part } from '../lifecycle/part.js';
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';
import type { PolicySnapshot } from '../policy/policy-store.js';
import { GraceEvents } from './grace-events.js';
import { RecordCollector } from './record-collector.js';
import { passRecordOf, RECORD_LIMITS, type RecordSigner } from './record-format.js';
import { RecordKey } from './record-key.js';
import { RecordMetrics } from './record-metrics.js';
import { RecordStore } from './record-store.js';
import { RecordWriter } from './record-writer.js';

export interface VerificationRecordsOptions {
  readonly api: KubeApi;
  /** Signet's namespace: the records, their key Secret. */
  readonly namespace: string;
  /** The Secret holding the HMAC key (created when missing). */
  readonly keySecret: string;
  /** Who this replica is, written into its records (its Pod name). */
  readonly replica: string;
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
  /** How long a recorded pass is reused instead of the registry (`--cache-ttl`). */
  readonly cacheTtlMs: number;
  /** The default grace period of stale-if-error (`--stale-if-error`); 0: off. */
  readonly staleIfErrorMs: number;
  /** Records at most (`--max-verification-records`). */
  readonly maxRecords: number;
  /** The Lease whose holder collects (the policy status Lease). */
  readonly election: Election;
  /** The policies now: their own grace periods bound how long records are kept. */
  readonly policies: () => PolicySnapshot | undefined;
  readonly now?: () => number;
  readonly flushMs?: number;
  readonly sweepMs?: number;
}

export class VerificationRecords implements Part {
  readonly name = 'verification records';
  readonly key: RecordKey;
  readonly store: RecordStore;
  readonly writer: RecordWriter;
  /** A leader-only part of its own: the records' garbage collection. */
  readonly collector: RecordCollector;
  readonly metrics: RecordMetrics;
  /** The verifier's shared cache. */
  readonly passes: PassRecords;
  /** Stale-if-error for the admission pipeline. */
  readonly grace: GraceRecords;
  readonly #o: VerificationRecordsOptions;
  readonly #now: () => number;
  readonly #events: GraceEvents;

  constructor(options: VerificationRecordsOptions) {
    this.#o = options;
    const now = options.now ?? Date.now;
    this.#now = now;
    const { api, namespace, logger } = options;
    this.metrics = new RecordMetrics(options.metrics.registry, options.metrics.policyLabel);
    this.key = new RecordKey({ api, namespace, secretName: options.keySecret, logger });
    const key = () => this.key.current;
    this.store = new RecordStore({ api, namespace, key, logger, metrics: this.metrics });
    this.writer = new RecordWriter({
      api,
      namespace,
      key,
      store: this.store,
      logger,
      metrics: this.metrics,
      maxRecords: options.maxRecords,
      ...(options.flushMs === undefined ? {} : { flushMs: options.flushMs }),
    });
    this.collector = new RecordCollector({
      api,
      namespace,
      store: this.store,
      logger,
      metrics: this.metrics,
      election: options.election,
      maxAgeMs: () => this.#maxAgeMs(),
      maxRecords: options.maxRecords,
      now,
      ...(options.sweepMs === undefined ? {} : { intervalMs: options.sweepMs }),
    });
    this.#events = new GraceEvents(api, logger, now);
    this.passes = {
      find: (policy, image) => this.#findPass(policy, image),
      passed: (policy, image, check) => this.#passed(policy, image, check),
    };
    this.grace = {
      defaultGraceMs: options.staleIfErrorMs,
      find: (policy, fingerprint, image) => this.#findRecord(policy, fingerprint, image),
      graced: (request, image, graced) => this.#graced(request, image, graced),
      refused: (refusal: GraceRefusal) => this.metrics.graceRefusals.inc({ refusal }),
    };
  }

  /** Reads the key and lists the records in the background (a lookup before then is a miss). */
  start(): void {
    this.key.start();
    this.store.start();
  }

  /** Writes what is queued (bounded), then stops reading. */
  async stop(): Promise<void> {
    await this.writer.stop();
    this.key.stop();
    await this.store.stop();
  }

  /** Records are useless past the longest grace period in force, and never before the cache TTL. */
  #maxAgeMs(): number {
    const set = this.#o.policies()?.policySet;
    const policies = set ? [...set.policies, ...[...set.namespaced.values()].flat()] : [];
    const own = policies.map((p) => p.staleIfErrorMs ?? 0);
    return Math.max(this.#o.cacheTtlMs, this.#o.staleIfErrorMs, ...own);
  }

  #findPass(policy: CompiledAuthorities, image: DigestRef): RecordedPass | undefined {
    const fields = this.store.find(policy.policy, policy.revision, imageOf(image));
    if (fields === undefined) {
      this.metrics.lookups.inc({ result: 'miss' });
      return undefined;
    }
    const age = this.#now() - fields.verifiedAt;
    const freshForMs = this.#o.cacheTtlMs - Math.max(0, age);
    if (age < -CLOCK_SKEW_MS || freshForMs <= 0) {
      this.metrics.lookups.inc({ result: 'stale' });
      return undefined;
    }
    this.metrics.lookups.inc({ result: 'hit' });
    const first = fields.signers[0];
    const check: PolicyCheck = {
      policy: policy.policy,
      passed: true,
      ...(first === undefined ? {} : { authority: first.authority }),
      authorities: [],
    };
    return { check, freshForMs };
  }

  #passed(policy: CompiledAuthorities, image: DigestRef, check: PolicyCheck): void {
    if (!check.passed) return;
    this.writer.enqueue({
      image: imageOf(image),
      policy: policy.policy,
      fingerprint: policy.revision,
      signers: signersOf(check),
      verifiedAt: this.#now(),
      verifiedBy: this.#o.replica.slice(0, RECORD_LIMITS.verifiedBy),
    });
  }

  #findRecord(policy: string, fingerprint: string, image: string): PassRecord | undefined {
    const fields = this.store.find(policy, fingerprint, image);
    return fields === undefined ? undefined : passRecordOf(fields);
  }

  #graced(request: AdmissionRequest, image: string, graced: GracedPolicy): void {
    this.metrics.graceAdmissions.inc({ policy: this.metrics.policyLabel.value(graced.policy) });
    const object = request.object ?? {};
    const name = object.metadata?.name ?? `${object.metadata?.generateName ?? ''}*`;
    const what = `${request.kind.kind} ${request.namespace ?? ''}/${name}`;
    const age = formatAge(graced.ageMs);
    const message =
      `${what} admitted on the verification record of ${image} for policy "${graced.policy}", ${age} old ` +
      `(stale-if-error): verification failed now: ${graced.failure.reason}`;
    this.#o.logger.warn(
      { uid: request.uid, image, policy: graced.policy, recordAgeMs: Math.round(graced.ageMs) },
      'admitted on a verification record (stale-if-error)',
    );
    const owner = controllerOf(object);
    const namespace = request.namespace;
    if (namespace === undefined) return;
    const involved =
      owner !== undefined
        ? { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid }
        : typeof object.metadata?.name === 'string'
          ? {
              apiVersion:
                request.kind.group === ''
                  ? request.kind.version
                  : `${request.kind.group}/${request.kind.version}`,
              kind: request.kind.kind,
              name: object.metadata.name,
            }
          : undefined;
    if (involved === undefined) return;
    this.#events.record({
      namespace,
      owner: involved,
      message,
      key: `${namespace}/${involved.kind}/${involved.name}\n${image}\n${graced.policy}`,
    });
  }
}

function imageOf(image: DigestRef): string {
  return `${image.registry}/${image.repository}@${image.digest}`;
}

const clamp = (text: string) => text.slice(0, RECORD_LIMITS.text);

/** Who signed, per passing authority, as a record keeps it (bounded). */
function signersOf(check: PolicyCheck): RecordSigner[] {
  const signers: RecordSigner[] = [];
  for (const authority of check.authorities) {
    if (!authority.passed || signers.length >= RECORD_LIMITS.signers) continue;
    const name = clamp(authority.authority);
    const signer = authority.signer;
    if (signer === undefined) signers.push({ authority: name, type: 'static' });
    else if (signer.type === 'key')
      signers.push({
        authority: name,
        type: 'key',
        key: clamp(signer.name),
        fingerprint: clamp(signer.fingerprint),
      });
    else
      signers.push({
        authority: name,
        type: 'keyless',
        issuer: clamp(signer.issuer),
        subject: clamp(signer.subject),
      });
  }
  return signers;
}
