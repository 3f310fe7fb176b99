import { ensureTools, pushRandomImage, type Registry, startRegistry } from '@signet/testbed';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { type KubectlResult, manifestText } from '../src/cluster/index.ts';
import { signKeylessLegacy } from '../src/keyless/legacy-signature.ts';
import { createTestSigstore, type KeylessIdentity } from '../src/keyless/test-sigstore.ts';
import { createNamespace, deniedByWebhook, must, poll } from '../src/scenarios/kube.ts';
import { keylessPolicy, keyPolicy } from '../src/scenarios/policies.ts';
import { INCLUDE_LABEL } from '../src/scenarios/rollout.ts';
import {
  KEY_POLICY,
  type Preparation,
  type SignetEnvironment,
  startSignetEnvironment,
} from '../src/scenarios/signet-environment.ts';
import { imageFieldPath, type WorkloadKind, workloadManifest } from '../src/scenarios/workloads.ts';
import { type AdmissionRecord, waitForAdmission } from '../src/webhooks/admission-log.ts';

// Everything but the rollout itself, each on the real API server with Signet in the path: what
// controllers and people do to existing non-compliant objects is admitted; whatever can start a
// container from an image that fails policy is denied; the policy's mode, signature format and
// authority kind are honoured; a registry outage blocks new images but not the cluster's upkeep.

const log = (line: string) => process.stderr.write(`${line}\n`);

const POLICIES = {
  bundle: 'bundle-signed',
  warn: 'warn-only',
  keyless: 'keyless-release',
  outage: 'outage-registry',
} as const;
const TRUST_ROOT = 'signet-e2e-sigstore';
const IDENTITY: KeylessIdentity = {
  issuer: 'https://issuer.signet-e2e.test',
  subject: 'https://github.com/signet-e2e/app/.github/workflows/release.yml@refs/heads/main',
};
const OTHER_IDENTITY: KeylessIdentity = {
  issuer: IDENTITY.issuer,
  subject: 'https://github.com/someone-else/app/.github/workflows/release.yml@refs/heads/main',
};

/** Images beyond the environment's `app:v1` (unsigned) and `app:v2` (signed). */
interface MoreImages {
  /** Plain registry: a bundle in the `sha256-<hex>` fallback tag. */
  bundleFallback: string;
  /** Plain registry: only a legacy `.sig`, under a policy that wants bundles. */
  bundleLegacyOnly: string;
  /** Referrers registry: a bundle referrer. */
  bundleReferrers: string;
  bundleUnsigned: string;
  warnUnsigned: string;
  keylessGood: string;
  keylessOtherIdentity: string;
  keylessUntrustedCa: string;
  outageSigned: string;
  outageNeverVerified: string;
}

describe('Signet: admission of everything around a rollout', () => {
  let env: SignetEnvironment | undefined;
  let outageRegistry: Registry | undefined;
  const more = {} as MoreImages;
  let failed = false;
  const environment = (): SignetEnvironment => {
    if (!env) throw new Error('the environment did not start');
    return env;
  };
  const kubectl = (args: readonly string[], input?: string) =>
    environment().cluster.kubectl(args, input === undefined ? {} : { input });
  const create = (objects: object | object[], extra: readonly string[] = []) =>
    kubectl(['create', '-f', '-', ...extra], manifestText(objects));
  /**
   * The admission log once it stops growing: Signet writes a line just after answering, so a
   * decision may land in the log a moment after kubectl returned.
   */
  const settledAdmissions = async (): Promise<readonly AdmissionRecord[]> => {
    let count = -1;
    for (;;) {
      const records = await environment().signet.admissions();
      if (records.length === count) return records;
      count = records.length;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  };
  /** Admissions Signet logged while `work` ran, on the validating endpoint. */
  const during = async (work: () => Promise<void>): Promise<AdmissionRecord[]> => {
    const before = (await settledAdmissions()).length;
    await work();
    return (await settledAdmissions()).slice(before).filter((a) => a.endpoint === 'validate');
  };

  beforeAll(async () => {
    env = await startSignetEnvironment({ onProgress: log, prepare: prepareMore });
    try {
      const { cluster, signet, images } = env;
      await cluster.apply(signet.configurations());
      await prepareLegacyNamespace(images.unsigned);
      await Promise.all(
        ['workloads', 'outage'].map((ns) => createNamespace(cluster, ns, { [INCLUDE_LABEL]: 'true' })),
      );
      // The API server loads webhook configurations asynchronously: wait for a denial.
      await poll('Signet to deny an unsigned Pod', 30_000, async () => {
        const probe = await create(workloadManifest('Pod', 'legacy', 'probe', images.unsigned), [
          '--dry-run=server',
        ]);
        return deniedByWebhook(probe) ? true : `exit ${probe.exitCode}: ${probe.stderr.trim()}`;
      });
    } catch (error) {
      failed = true;
      throw new Error(`${(error as Error).message}\n${await env.cluster.logTails(15)}`, { cause: error });
    }
  });

  /** Registries, images, signatures and policies the scenarios below need, before Signet starts. */
  async function prepareMore(ready: Omit<SignetEnvironment, 'signet'>): Promise<Preparation> {
    const { cluster, images, publicKeyPem } = ready;
    const plain = images.registry;
    const [referrers, outage, { crane }] = await Promise.all([
      startRegistry({ referrers: true, group: cluster.group }),
      startRegistry({ referrers: false, group: cluster.group }),
      ensureTools(['crane']),
    ]);
    outageRegistry = outage;
    const push = async (registry: Pick<Registry, 'host'>, repo: string, tag: string) =>
      `${registry.host}/${repo}@${await pushRandomImage(registry, repo, tag, { crane, workDir: cluster.runDir })}`;
    const { cosign, key } = images;
    const trusted = createTestSigstore();
    const untrusted = createTestSigstore();
    await Promise.all([
      push(plain, 'bundle/app', 'fallback').then(async (ref) => {
        await cosign.signBundleKeyed(ref, key);
        more.bundleFallback = ref;
      }),
      push(plain, 'bundle/app', 'legacy-only').then(async (ref) => {
        await cosign.signLegacyKeyed(ref, key);
        more.bundleLegacyOnly = ref;
      }),
      push(referrers, 'bundle/app', 'referrers').then(async (ref) => {
        await cosign.signBundleKeyed(ref, key);
        more.bundleReferrers = ref;
      }),
      push(referrers, 'bundle/app', 'unsigned').then((ref) => {
        more.bundleUnsigned = ref;
      }),
      push(plain, 'warn/app', 'v1').then((ref) => {
        more.warnUnsigned = ref;
      }),
      push(plain, 'keyless/app', 'good').then(async (ref) => {
        await signKeylessLegacy(trusted, ref, IDENTITY);
        more.keylessGood = ref;
      }),
      push(plain, 'keyless/app', 'other-identity').then(async (ref) => {
        await signKeylessLegacy(trusted, ref, OTHER_IDENTITY);
        more.keylessOtherIdentity = ref;
      }),
      push(plain, 'keyless/app', 'untrusted-ca').then(async (ref) => {
        await signKeylessLegacy(untrusted, ref, IDENTITY);
        more.keylessUntrustedCa = ref;
      }),
      push(outage, 'app', 'v1').then(async (ref) => {
        await cosign.signLegacyKeyed(ref, key);
        more.outageSigned = ref;
      }),
      push(outage, 'app', 'v2').then((ref) => {
        more.outageNeverVerified = ref;
      }),
    ]);
    log(`images: ${JSON.stringify(more, null, 2)}`);
    return {
      insecureRegistries: [referrers.host, outage.host],
      policies: [
        keyPolicy({
          name: POLICIES.bundle,
          images: [`${plain.host}/bundle/**`, `${referrers.host}/bundle/**`],
          publicKeyPem,
          signatureFormat: 'bundle',
        }),
        keyPolicy({ name: POLICIES.warn, images: [`${plain.host}/warn/**`], publicKeyPem, mode: 'warn' }),
        trusted.trustRoot(TRUST_ROOT),
        keylessPolicy({
          name: POLICIES.keyless,
          images: [`${plain.host}/keyless/**`],
          trustRoot: TRUST_ROOT,
          ...IDENTITY,
        }),
        keyPolicy({ name: POLICIES.outage, images: [`${outage.host}/**`], publicKeyPem }),
      ],
      // Loaded and usable: the keyless one only once its TrustRoot is there too.
      policyNames: Object.values(POLICIES),
    };
  }

  /** Objects that run the unsigned image from before the namespace was enforced. */
  async function prepareLegacyNamespace(unsigned: string): Promise<void> {
    const { cluster } = environment();
    await createNamespace(cluster, 'legacy');
    const hold = { finalizers: ['e2e.signet.dev/hold'] };
    await cluster.apply([
      workloadManifest('Deployment', 'legacy', 'old-app', unsigned, { replicas: 2 }),
      workloadManifest('Pod', 'legacy', 'held', unsigned, hold),
      workloadManifest('Pod', 'legacy', 'held-deleted', unsigned, hold),
      workloadManifest('Pod', 'legacy', 'debug-target', unsigned),
    ]);
    must(await kubectl(['rollout', 'status', 'deployment/old-app', '-n', 'legacy', '--timeout=60s']));
    must(
      await kubectl([
        'wait',
        '--for=condition=Ready',
        'pod/held',
        'pod/held-deleted',
        'pod/debug-target',
        '-n',
        'legacy',
        '--timeout=60s',
      ]),
    );
    must(await kubectl(['label', 'namespace', 'legacy', `${INCLUDE_LABEL}=true`]));
  }

  beforeEach(() => {
    onTestFailed(() => {
      failed = true;
    });
  });

  afterAll(async () => {
    await env?.signet.stop();
    await env?.cluster.stop(failed ? { keepRunDir: true } : {});
    if (failed) log(`kept the run directory ${env?.cluster.runDir} (Signet log: ${env?.signet.logFile})`);
  });

  const expectDenied = (result: KubectlResult, ...fragments: string[]) => {
    expect(deniedByWebhook(result), `exit ${result.exitCode}: ${result.stderr}`).toBe(true);
    for (const fragment of fragments) expect(result.stderr).toContain(fragment);
  };
  const expectAdmitted = (result: KubectlResult) => expect(result.exitCode, result.stderr).toBe(0);

  describe('existing non-compliant objects (created before the namespace was enforced)', () => {
    it('admits label and annotation edits and a scale-down of a non-compliant Deployment', async () => {
      const { images } = environment();
      const admissions = await during(async () => {
        expectAdmitted(await kubectl(['label', 'deployment/old-app', '-n', 'legacy', 'team=blue']));
        expectAdmitted(
          await kubectl(['annotate', 'deployment/old-app', '-n', 'legacy', 'e2e.signet.dev/note=edited']),
        );
        expectAdmitted(
          await kubectl(['patch', 'deployment/old-app', '-n', 'legacy', '-p', '{"spec":{"replicas":1}}']),
        );
        must(await kubectl(['rollout', 'status', 'deployment/old-app', '-n', 'legacy', '--timeout=60s']));
      });
      const updates = admissions.filter((a) => a.kind === 'Deployment' && a.name === 'old-app');
      expect(updates.map((a) => `${a.decision}/${a.rule}`)).toEqual([
        'allowed/template-unchanged',
        'allowed/template-unchanged',
        'allowed/scale-down',
      ]);
      // The deployment controller's scale-down of the ReplicaSet, too.
      const rs = admissions.filter((a) => a.kind === 'ReplicaSet' && a.operation === 'UPDATE');
      expect(rs.length).toBeGreaterThan(0);
      for (const a of rs) expect(a.decision, a.line).toBe('allowed');
      // Controls: the webhook is in the path for this object; a change that can start Pods is verified.
      const field = `spec.template.spec.containers[0].image ${images.unsigned}`;
      expectDenied(
        await kubectl(['patch', 'deployment/old-app', '-n', 'legacy', '-p', '{"spec":{"replicas":3}}']),
        field,
      );
      expectDenied(
        await kubectl([
          'patch',
          'deployment/old-app',
          '-n',
          'legacy',
          '-p',
          '{"spec":{"template":{"metadata":{"annotations":{"e2e.signet.dev/restart":"1"}}}}}',
        ]),
        field,
        `policy "${KEY_POLICY}" (enforce)`,
      );
    });

    it('admits removing a finalizer from a non-compliant Pod, with and without a deletion under way', async () => {
      const removeFinalizers = (pod: string) =>
        kubectl([
          'patch',
          `pod/${pod}`,
          '-n',
          'legacy',
          '--type=json',
          '-p=[{"op":"remove","path":"/metadata/finalizers"}]',
        ]);
      const admissions = await during(async () => {
        expectAdmitted(await removeFinalizers('held'));
        expectAdmitted(await kubectl(['delete', 'pod/held-deleted', '-n', 'legacy', '--wait=false']));
        expectAdmitted(await removeFinalizers('held-deleted'));
        must(await kubectl(['wait', '--for=delete', 'pod/held-deleted', '-n', 'legacy', '--timeout=30s']));
      });
      const podUpdates = admissions.filter((a) => a.kind === 'Pod' && a.operation === 'UPDATE');
      expect(podUpdates.find((a) => a.name === 'held')).toMatchObject({
        decision: 'allowed',
        rule: 'pod-images-unchanged',
      });
      expect(podUpdates.find((a) => a.name === 'held-deleted')?.decision).toBe('allowed');
      expect(admissions.filter((a) => a.decision === 'denied')).toEqual([]);
    });

    it('admits deleting non-compliant objects, with the garbage collector cascading', async () => {
      const admissions = await during(async () => {
        expectAdmitted(await kubectl(['delete', 'pod/held', '-n', 'legacy', '--timeout=30s']));
        expectAdmitted(
          await kubectl([
            'delete',
            'deployment/old-app',
            '-n',
            'legacy',
            '--cascade=foreground',
            '--timeout=60s',
          ]),
        );
        await poll('the ReplicaSets and Pods of old-app to be gone', 30_000, async () => {
          const left = must(
            await kubectl(['get', 'replicasets,pods', '-n', 'legacy', '-l', 'app=old-app', '-o', 'name']),
          ).stdout.trim();
          return left === '' ? true : left;
        });
      });
      expect(admissions.filter((a) => a.decision === 'denied')).toEqual([]);
    });

    it('kubectl debug: admits a signed debug image on a non-compliant Pod, denies an unsigned one', async () => {
      const { images } = environment();
      const debug = (image: string, container: string) =>
        kubectl([
          'debug',
          'pod/debug-target',
          '-n',
          'legacy',
          `--image=${image}`,
          `--container=${container}`,
          '--attach=false',
        ]);
      const admissions = await during(async () => {
        expectAdmitted(await debug(images.signed, 'signed-debugger'));
      });
      // kwok Pods accept the ephemeralcontainers subresource like any other.
      const names = must(
        await kubectl([
          'get',
          'pod/debug-target',
          '-n',
          'legacy',
          '-o',
          'jsonpath={.spec.ephemeralContainers[*].name}',
        ]),
      ).stdout;
      expect(names).toBe('signed-debugger');
      expect(
        admissions.find((a) => a.kind === 'Pod' && a.subResource === 'ephemeralcontainers'),
      ).toMatchObject({
        decision: 'allowed',
        rule: 'ephemeral-containers-added',
      });
      const unsigned = await debug(images.unsigned, 'unsigned-debugger');
      expectDenied(
        unsigned,
        `spec.ephemeralContainers[1].image ${images.unsigned}`,
        `policy "${KEY_POLICY}"`,
      );
      log(`kubectl debug (unsigned): ${unsigned.stderr.trim()}`);
    });
  });

  describe('creating workloads of every kind', () => {
    const kinds: readonly WorkloadKind[] = [
      'Job',
      'CronJob',
      'StatefulSet',
      'DaemonSet',
      'ReplicationController',
      'Pod',
    ];
    /** Pods the kind's controller creates from one signed object (CronJob: none before its schedule). */
    const podsExpected: Record<WorkloadKind, number> = {
      Job: 1,
      CronJob: 0,
      StatefulSet: 1,
      DaemonSet: 2,
      ReplicationController: 1,
      Pod: 1,
      Deployment: 1,
      ReplicaSet: 1,
    };

    it.each(kinds)('%s: admits the signed image, denies the unsigned one naming the field', async (kind) => {
      const { images } = environment();
      const name = `signed-${kind.toLowerCase()}`;
      expectAdmitted(await create(workloadManifest(kind, 'workloads', name, images.signed)));
      const denied = await create(
        workloadManifest(kind, 'workloads', `unsigned-${kind.toLowerCase()}`, images.unsigned),
      );
      expectDenied(denied, `${imageFieldPath(kind)} ${images.unsigned}: policy "${KEY_POLICY}" (enforce)`);
      const pods = podsExpected[kind];
      if (pods > 0) {
        // The controller's Pods pass the webhook too (each Pod CREATE is verified).
        await poll(`${pods} Pod(s) of ${kind} ${name}`, 30_000, async () => {
          const out = must(
            await kubectl(['get', 'pods', '-n', 'workloads', '-l', `app=${name}`, '-o', 'name']),
          ).stdout;
          const count = out.split('\n').filter(Boolean).length;
          return count >= pods ? true : `${count} Pods`;
        });
      }
      const none = must(
        await kubectl([
          'get',
          'pods',
          '-n',
          'workloads',
          '-l',
          `app=unsigned-${kind.toLowerCase()}`,
          '-o',
          'name',
        ]),
      );
      expect(none.stdout.trim()).toBe('');
    });

    it('pins a tag to its digest (mutating webhook) and verifies the digest', async () => {
      const { images } = environment();
      const host = images.registry.host;
      const signedDigest = images.signed.split('@')[1];
      expectAdmitted(await create(workloadManifest('Deployment', 'workloads', 'by-tag', `${host}/app:v2`)));
      const stored = must(
        await kubectl([
          'get',
          'deployment/by-tag',
          '-n',
          'workloads',
          '-o',
          'jsonpath={.spec.template.spec.containers[0].image}',
        ]),
      ).stdout;
      expect(stored).toBe(`${host}/app:v2@${signedDigest}`);
      expectDenied(
        await create(workloadManifest('Deployment', 'workloads', 'by-unsigned-tag', `${host}/app:v1`)),
        `${host}/app:v1`,
      );
    });
  });

  describe('signature formats, modes and authorities', () => {
    it('bundle signatures: admits a bundle found through the referrers API and through the fallback tag', async () => {
      expectAdmitted(
        await create(workloadManifest('Pod', 'workloads', 'bundle-referrers', more.bundleReferrers)),
      );
      expectAdmitted(
        await create(workloadManifest('Pod', 'workloads', 'bundle-fallback', more.bundleFallback)),
      );
      expectDenied(
        await create(workloadManifest('Pod', 'workloads', 'bundle-unsigned', more.bundleUnsigned)),
        `spec.containers[0].image ${more.bundleUnsigned}: policy "${POLICIES.bundle}" (enforce)`,
      );
      // signatureFormat: bundle means bundles only: a legacy `.sig` by the same key does not count.
      expectDenied(
        await create(workloadManifest('Pod', 'workloads', 'bundle-legacy-only', more.bundleLegacyOnly)),
        `policy "${POLICIES.bundle}" (enforce)`,
      );
    });

    it('warn mode: admits an unsigned image with a warning kubectl shows', async () => {
      const result = await create(workloadManifest('Deployment', 'workloads', 'warned', more.warnUnsigned));
      expectAdmitted(result);
      expect(result.stderr).toMatch(/^Warning: /m);
      expect(result.stderr).toContain(more.warnUnsigned);
      expect(result.stderr).toContain(`policy "${POLICIES.warn}" (warn)`);
      log(`warn mode: ${result.stderr.trim()}`);
      // Its Pods are admitted with warnings as well, so the Deployment becomes Ready.
      must(await kubectl(['rollout', 'status', 'deployment/warned', '-n', 'workloads', '--timeout=60s']));
    });

    it('keyless: admits the trusted CA and identity, denies another identity and an untrusted CA', async () => {
      expectAdmitted(await create(workloadManifest('Pod', 'workloads', 'keyless-good', more.keylessGood)));
      const other = await create(
        workloadManifest('Pod', 'workloads', 'keyless-other', more.keylessOtherIdentity),
      );
      expectDenied(other, `policy "${POLICIES.keyless}" (enforce)`, OTHER_IDENTITY.subject);
      log(`keyless, other identity: ${other.stderr.trim()}`);
      const rogue = await create(
        workloadManifest('Pod', 'workloads', 'keyless-rogue', more.keylessUntrustedCa),
      );
      expectDenied(rogue, `policy "${POLICIES.keyless}" (enforce)`);
      log(`keyless, untrusted CA: ${rogue.stderr.trim()}`);
    });
  });

  describe('the registry goes away', () => {
    it('still admits scale-downs and label edits; denies a new image with an infrastructure reason', async () => {
      const manifest = workloadManifest('Deployment', 'outage', 'steady', more.outageSigned, { replicas: 2 });
      expectAdmitted(await create(manifest));
      must(await kubectl(['rollout', 'status', 'deployment/steady', '-n', 'outage', '--timeout=60s']));
      await outageRegistry?.stop();
      const admissions = await during(async () => {
        expectAdmitted(
          await kubectl(['patch', 'deployment/steady', '-n', 'outage', '-p', '{"spec":{"replicas":1}}']),
        );
        expectAdmitted(
          await kubectl(['label', 'deployment/steady', '-n', 'outage', 'e2e.signet.dev/outage=true']),
        );
        await poll('deployment/steady to run 1 Pod', 30_000, async () => {
          const pods = must(
            await kubectl(['get', 'pods', '-n', 'outage', '-l', 'app=steady', '-o', 'name']),
          ).stdout;
          const count = pods.split('\n').filter(Boolean).length;
          return count === 1 ? true : `${count} Pods`;
        });
      });
      for (const a of admissions) expect(a.decision, a.line).toBe('allowed');
      expect(admissions.some((a) => a.kind === 'ReplicaSet' && a.rule === 'scale-down')).toBe(true);
      const fresh = await create(workloadManifest('Deployment', 'outage', 'fresh', more.outageNeverVerified));
      expectDenied(fresh, `spec.template.spec.containers[0].image ${more.outageNeverVerified}`);
      expect(fresh.stderr).not.toContain('no signature found');
      const denial = await waitForAdmission(
        () => environment().signet.admissions(),
        (a) => a.endpoint === 'validate' && a.name === 'fresh' && a.decision === 'denied',
      );
      expect(denial?.rule, denial?.line).toBe('infrastructure');
      // ...and the metrics count the registry error by class.
      expect(await environment().signet.metrics()).toMatch(
        /^signet_registry_errors_total\{class="[a-z_]+"\} [1-9]/m,
      );
      log(`registry down: ${fresh.stderr.trim()}`);
    });
  });
});
