import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureTools, pushRandomImage } from '@signet/testbed';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { manifestText } from '../src/cluster/index.ts';
import { createNamespace, deniedByWebhook, must, poll } from '../src/scenarios/kube.ts';
import { INCLUDE_LABEL } from '../src/scenarios/rollout.ts';
import {
  type Preparation,
  type SignetEnvironment,
  startSignetEnvironment,
} from '../src/scenarios/signet-environment.ts';
import { workloadManifest } from '../src/scenarios/workloads.ts';

// A CUE and a Rego attestation policy (policy-controller's custom-predicate policies, in its
// format) on the real control plane with Signet in the path: a Deployment whose image carries the
// attestation they want rolls out; a Pod whose attestation says something else is denied at
// CREATE, the message naming the policy, the attestation and the conflicting value.

const log = (line: string) => process.stderr.write(`${line}\n`);
const NAMESPACE = 'languages';
const POLICIES = { cue: 'custom-attestation-cue', rego: 'custom-attestation-rego' } as const;

function attestationPolicy(name: string, glob: string, publicKeyPem: string, policy: object): object {
  return {
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name },
    spec: {
      images: [{ glob }],
      authorities: [
        {
          name: 'test-key',
          key: { data: publicKeyPem },
          attestations: [{ name: 'custom-match-predicate', predicateType: 'custom', policy }],
        },
      ],
    },
  };
}

describe('Signet: CUE and Rego attestation policies', () => {
  let env: SignetEnvironment | undefined;
  const images = { good: '', bad: '' };
  let failed = false;
  const environment = (): SignetEnvironment => {
    if (!env) throw new Error('the environment did not start');
    return env;
  };
  const kubectl = (args: readonly string[], input?: string) =>
    environment().cluster.kubectl(args, input === undefined ? {} : { input });

  async function prepare(ready: Omit<SignetEnvironment, 'signet'>): Promise<Preparation> {
    const { cluster, images: base, publicKeyPem } = ready;
    const { crane } = await ensureTools(['crane']);
    const push = async (tag: string) =>
      `${base.registry.host}/attested/app@${await pushRandomImage(base.registry, 'attested/app', tag, { crane, workDir: cluster.runDir })}`;
    [images.good, images.bad] = await Promise.all([push('good'), push('bad')]);
    // As policy-controller's e2e script does: echo -n 'foobar e2e test' > predicate; cosign attest --type custom
    for (const [image, text] of [
      [images.good, 'foobar e2e test'],
      [images.bad, 'something else'],
    ] as const) {
      const predicatePath = join(cluster.runDir, `predicate-${text.replaceAll(' ', '-')}`);
      await writeFile(predicatePath, text);
      await base.cosign.attest(image, base.key, { predicatePath, type: 'custom', format: 'legacy' });
    }
    log(`images: ${JSON.stringify(images)}`);
    const glob = `${base.registry.host}/attested/**`;
    return {
      insecureRegistries: [],
      policies: [
        attestationPolicy(POLICIES.cue, glob, publicKeyPem, {
          type: 'cue',
          data: 'predicateType: "https://cosign.sigstore.dev/attestation/v1"\npredicate: Data: "foobar e2e test"\n',
        }),
        attestationPolicy(POLICIES.rego, glob, publicKeyPem, {
          type: 'rego',
          data: 'package sigstore\ndefault isCompliant = false\nisCompliant {\n  input.predicateType == "https://cosign.sigstore.dev/attestation/v1"\n  input.predicate.Data == "foobar e2e test"\n}\n',
        }),
      ],
      policyNames: Object.values(POLICIES),
    };
  }

  beforeAll(async () => {
    env = await startSignetEnvironment({ onProgress: log, prepare });
    try {
      const { cluster, signet } = env;
      await cluster.apply(signet.configurations());
      await createNamespace(cluster, NAMESPACE, { [INCLUDE_LABEL]: 'true' });
      await poll('Signet to deny the Pod with the wrong attestation', 30_000, async () => {
        const probe = await kubectl(
          ['create', '-f', '-', '--dry-run=server'],
          manifestText(workloadManifest('Pod', NAMESPACE, 'probe', images.bad)),
        );
        return deniedByWebhook(probe) ? true : `exit ${probe.exitCode}: ${probe.stderr.trim()}`;
      });
    } catch (error) {
      failed = true;
      throw new Error(`${(error as Error).message}\n${await env.cluster.logTails(15)}`, { cause: error });
    }
  });

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

  it('rolls out a Deployment whose image has the attestation both policies want', async () => {
    must(
      await kubectl(
        ['create', '-f', '-'],
        manifestText(workloadManifest('Deployment', NAMESPACE, 'attested', images.good, { replicas: 2 })),
      ),
    );
    const status = await environment().cluster.kubectl(
      ['rollout', 'status', 'deployment/attested', '--namespace', NAMESPACE, '--timeout=60s'],
      { timeoutMs: 70_000 },
    );
    expect(status.exitCode, status.stderr).toBe(0);
    const ready = must(
      await kubectl([
        'get',
        'deployment',
        'attested',
        '--namespace',
        NAMESPACE,
        '-o',
        'jsonpath={.status.readyReplicas}',
      ]),
    );
    expect(ready.stdout.trim()).toBe('2');
  });

  it('denies a Pod whose attestation fails both policies, at CREATE, saying why', async () => {
    const result = await kubectl(
      ['create', '-f', '-'],
      manifestText(workloadManifest('Pod', NAMESPACE, 'wrong-attestation', images.bad)),
    );
    expect(deniedByWebhook(result), `exit ${result.exitCode}: ${result.stderr}`).toBe(true);
    expect(result.stderr).toContain(
      `spec.containers[0].image ${images.bad}: policy "${POLICIES.cue}" (enforce)`,
    );
    expect(result.stderr).toContain(
      'failed evaluating cue policy for custom-match-predicate: failed to evaluate the policy with error: predicate.Data: conflicting values "something else" and "foobar e2e test"',
    );
    expect(result.stderr).toContain(`policy "${POLICIES.rego}" (enforce)`);
    expect(result.stderr).toContain(
      "failed evaluating rego policy for type custom-match-predicate: policy is not compliant for query 'isCompliant = data.sigstore.isCompliant'",
    );
    const pods = must(await kubectl(['get', 'pods', '--namespace', NAMESPACE, '-o', 'name']));
    expect(pods.stdout).not.toContain('wrong-attestation');
  });
});
