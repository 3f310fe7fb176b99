import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import type { DeployedSignet, TestCluster } from '../src/providers/index.ts';
import { providerFromEnv } from '../src/providers/index.ts';
import { deniedByWebhook, must } from '../src/scenarios/kube.ts';
import {
  DEPLOYMENT_CONTROLLER_USER,
  type RolloutObservation,
  runRolloutScenario,
} from '../src/scenarios/rollout.ts';
import {
  KEY_POLICY,
  type SignetEnvironment,
  startProviderEnvironment,
} from '../src/scenarios/signet-environment.ts';
import { type AdmissionRecord, waitForAdmission } from '../src/webhooks/admission-log.ts';

// The bug Signet exists for, and the rollout traps of the admission contract, against Signet
// running as a host process on a real control plane. `stuck-rollout.test.ts` runs the same
// scenario against the naive fixture and proves that it gets stuck; here it must complete.

const log = (line: string) => process.stderr.write(`${line}\n`);
const REPLICASET_CONTROLLER_USER = 'system:serviceaccount:kube-system:replicaset-controller';
const IMAGE_FIELD = 'spec.template.spec.containers[0].image';

/** What Signet decided on the validating endpoint (the mutating one logs too). */
const validating = (records: readonly AdmissionRecord[]) => records.filter((r) => r.endpoint === 'validate');

describe('Signet: a rollout from an unsigned to a signed image', () => {
  let env: SignetEnvironment<TestCluster, DeployedSignet> | undefined;
  let observed: RolloutObservation;
  let failed = false;
  const environment = (): SignetEnvironment<TestCluster, DeployedSignet> => {
    if (!env) throw new Error('the environment did not start');
    return env;
  };

  beforeAll(async () => {
    // E2E_PROVIDER=kind runs this file on a kind cluster (see README: untested in CI).
    env = await startProviderEnvironment(providerFromEnv(), { onProgress: log });
    try {
      observed = await runRolloutScenario(env.cluster, env.signet, {
        unsignedImage: env.images.unsigned,
        signedImage: env.images.signed,
        rolloutDeadlineMs: 60_000,
        onProgress: (message) => log(`scenario: ${message}`),
      });
      log(
        `scenario: completed=${observed.completed} in ${observed.secondsToComplete}s, timings ${JSON.stringify(observed.timings)}`,
      );
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

  it('completes: the old ReplicaSet reaches 0, the new one is Ready, the Deployment 2/2', () => {
    expect(observed.completed, observed.deployment.table).toBe(true);
    expect(observed.deployment).toMatchObject({
      desired: 2,
      replicas: 2,
      availableReplicas: 2,
      readyColumn: '2/2',
    });
    expect(observed.oldReplicaSet).toMatchObject({
      image: environment().images.unsigned,
      desired: 0,
      pods: 0,
    });
    expect(observed.newReplicaSet).toMatchObject({
      image: environment().images.signed,
      desired: 2,
      pods: 2,
      readyPods: 2,
    });
    log(observed.deployment.table);
  });

  it("admits the deployment controller's scale-downs of the old ReplicaSet by rule, without verifying", () => {
    const controllerUpdates = validating(observed.admissions).filter(
      (a) =>
        a.kind === 'ReplicaSet' &&
        a.operation === 'UPDATE' &&
        a.user === DEPLOYMENT_CONTROLLER_USER &&
        a.name === observed.oldReplicaSet?.name,
    );
    expect(
      controllerUpdates.length,
      `no ReplicaSet UPDATE of the old ReplicaSet in ${environment().signet.logFile}`,
    ).toBeGreaterThan(0);
    for (const update of controllerUpdates) {
      expect(update.decision, update.line).toBe('allowed');
      expect(['scale-down', 'template-unchanged'], update.line).toContain(update.rule);
    }
    expect(controllerUpdates.map((u) => u.rule)).toContain('scale-down');
    expect(observed.controllerDenials).toEqual([]);
    log(
      `signet: ${controllerUpdates.length} controller UPDATEs of ${observed.oldReplicaSet?.name}: ${controllerUpdates.map((u) => u.rule).join(', ')}`,
    );
  });

  it('verified the new Pods: every Pod CREATE of the rollout was checked and admitted', () => {
    const podCreates = validating(observed.admissions).filter(
      (a) => a.kind === 'Pod' && a.operation === 'CREATE' && a.namespace === 'test',
    );
    expect(podCreates.length).toBeGreaterThanOrEqual(2);
    for (const create of podCreates)
      expect(create, create.line).toMatchObject({ decision: 'allowed', rule: 'create' });
    // (The enforcement probe's dry-run denial may be logged just after the image update.)
    expect(observed.admissions.filter((a) => a.decision === 'denied' && !a.dryRun)).toEqual([]);
  });

  it('denies `kubectl rollout undo` back to the unsigned image at the Deployment, naming the field', async () => {
    const { cluster, images, signet } = environment();
    const before = (await signet.admissions()).length;
    const undo = await cluster.kubectl(['rollout', 'undo', 'deployment/foo-bar', '--namespace', 'test']);
    expect(deniedByWebhook(undo), `kubectl rollout undo: exit ${undo.exitCode} ${undo.stderr}`).toBe(true);
    expect(undo.stderr).toContain(`${IMAGE_FIELD} ${images.unsigned}`);
    expect(undo.stderr).toContain(`policy "${KEY_POLICY}" (enforce)`);
    log(`kubectl rollout undo: ${undo.stderr.trim()}`);
    const denial = await waitForAdmission(
      () => signet.admissions(),
      (a) =>
        a.endpoint === 'validate' &&
        a.kind === 'Deployment' &&
        a.operation === 'UPDATE' &&
        a.decision === 'denied',
      { skip: before },
    );
    expect(denial?.rule, denial?.line).toBe('policy');
    // Nothing changed: the Deployment still runs the signed template.
    const image = must(
      await cluster.kubectl([
        'get',
        'deployment/foo-bar',
        '--namespace',
        'test',
        '-o',
        'jsonpath={.spec.template.spec.containers[0].image}',
      ]),
    ).stdout;
    expect(image).toBe(images.signed);
  });

  it('denies one ReplicaSet UPDATE that lowers replicas and changes the image (a scale-down alone is admitted)', async () => {
    const { cluster, images } = environment();
    const name = observed.newReplicaSet?.name ?? '';
    const patch = (ops: object[], dryRun: boolean) =>
      cluster.kubectl([
        'patch',
        'replicaset',
        name,
        '--namespace',
        'test',
        '--type=json',
        `-p=${JSON.stringify(ops)}`,
        ...(dryRun ? ['--dry-run=server'] : []),
      ]);
    const lower = { op: 'replace', path: '/spec/replicas', value: 1 };
    const swap = { op: 'replace', path: '/spec/template/spec/containers/0/image', value: images.unsigned };
    // Control: the same scale-down without the image swap passes the webhook (dry run: nothing stored).
    const scaleDown = await patch([lower], true);
    expect(scaleDown.exitCode, scaleDown.stderr).toBe(0);
    const both = await patch([lower, swap], false);
    expect(deniedByWebhook(both), `exit ${both.exitCode}: ${both.stderr}`).toBe(true);
    expect(both.stderr).toContain(`${IMAGE_FIELD} ${images.unsigned}`);
    log(`kubectl patch replicaset (replicas 1 + unsigned image): ${both.stderr.trim()}`);
    const rs = await cluster.getJson<{
      spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
    }>(['replicaset', name, '--namespace', 'test']);
    expect(rs.spec.replicas).toBe(2);
    expect(rs.spec.template.spec.containers[0]?.image).toBe(images.signed);
  });

  it('completes a rollout that is scaled through /scale (HPA-style) in the middle', async () => {
    const { cluster, images, signet } = environment();
    const scaled = await runRolloutScenario(cluster, signet, {
      namespace: 'scaled',
      unsignedImage: images.unsigned,
      signedImage: images.signed,
      // Each new Pod counts as available only after 5 s: the rollout lasts long enough to scale it.
      minReadySeconds: 5,
      rolloutDeadlineMs: 90_000,
      midRollout: {
        when: (state) => {
          const next = state.replicaSets.find((rs) => rs.image === images.signed);
          return next !== undefined && next.pods >= 1 && !state.deployment.complete;
        },
        action: async () => {
          must(
            await cluster.kubectl(['scale', 'deployment/foo-bar', '--replicas=4', '--namespace', 'scaled']),
          );
          log('scenario: kubectl scale deployment/foo-bar --replicas=4 (the /scale subresource)');
        },
      },
      onProgress: (message) => log(`scaled: ${message}`),
    });
    expect(scaled.midRolloutDone, 'the rollout finished before it could be scaled').toBe(true);
    expect(scaled.completed, scaled.deployment.table).toBe(true);
    expect(scaled.deployment).toMatchObject({
      desired: 4,
      replicas: 4,
      availableReplicas: 4,
      readyColumn: '4/4',
    });
    expect(scaled.oldReplicaSet).toMatchObject({ desired: 0, pods: 0 });
    expect(scaled.newReplicaSet).toMatchObject({ desired: 4, pods: 4, readyPods: 4 });
    expect(scaled.controllerDenials).toEqual([]);
    const oldName = scaled.oldReplicaSet?.name;
    const raised = validating(scaled.admissions).filter(
      (a) => a.kind === 'ReplicaSet' && a.name === oldName && a.rule === 'owned-scale-up',
    );
    log(
      `scaled: old ReplicaSet UPDATEs by rule: ${validating(scaled.admissions)
        .filter((a) => a.kind === 'ReplicaSet' && a.name === oldName)
        .map((a) => `${a.rule}/${a.decision}`)
        .join(', ')}`,
    );
    // Proportional scaling raised the old (unsigned) ReplicaSet: admitted, with a warning...
    expect(raised.length, `no owned-scale-up of ${oldName} in ${signet.logFile}`).toBeGreaterThan(0);
    for (const r of raised) expect(r.decision, r.line).not.toBe('denied');
    // ...while the Pods it then tried to create with the unsigned image were denied.
    const unsignedPods = validating(scaled.admissions).filter(
      (a) =>
        a.kind === 'Pod' &&
        a.operation === 'CREATE' &&
        a.namespace === 'scaled' &&
        a.user === REPLICASET_CONTROLLER_USER &&
        a.decision === 'denied',
    );
    expect(
      unsignedPods.length,
      'the raised old ReplicaSet created no Pod, or it was admitted',
    ).toBeGreaterThan(0);
    expect(unsignedPods[0]?.reason).toContain(images.unsigned);
    const maxOldPods = Math.max(
      ...scaled.states.map((s) => s.replicaSets.find((rs) => rs.image === images.unsigned)?.pods ?? 0),
    );
    expect(
      maxOldPods,
      'the old ReplicaSet ran more unsigned Pods than before the rollout',
    ).toBeLessThanOrEqual(2);
  });
});
