import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { type LocalCluster, startLocalCluster } from '../src/cluster/index.ts';
import { type NaiveWebhook, startNaiveWebhook } from '../src/naive-webhook.ts';
import {
  DEPLOYMENT_CONTROLLER_USER,
  type RolloutObservation,
  runRolloutScenario,
} from '../src/scenarios/rollout.ts';
import { prepareTestImages, type TestImages } from '../src/scenarios/test-images.ts';

// The bug Signet exists for, reproduced on a real control plane with the naive fixture: the
// deployment controller's scale-down of the old (unsigned) ReplicaSet is denied, so the rollout to
// a signed image never finishes. If this file passes with the naive webhook, the scenario is able
// to catch the bug; the Signet run of the same scenario must then complete.

const log = (line: string) => process.stderr.write(`${line}\n`);

describe('stuck rollout, negative control: a webhook that re-verifies every UPDATE', () => {
  let cluster: LocalCluster | undefined;
  let webhook: NaiveWebhook | undefined;
  let images: TestImages;
  let observed: RolloutObservation;
  // A failure keeps the run directory (every component's log, the webhook's log) for a look.
  let failed = false;

  beforeAll(async () => {
    cluster = await startLocalCluster({ onProgress: (event) => log(`cluster ${event.line}`) });
    try {
      const started = Date.now();
      images = await prepareTestImages({
        group: cluster.group,
        workDir: cluster.runDir,
        onProgress: (message) => log(`images: ${message}`),
      });
      log(`images: ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      webhook = await startNaiveWebhook({
        cosign: images.cosign,
        publicKey: images.key.publicKey,
        logFile: join(cluster.runDir, 'naive-webhook.log'),
      });
      observed = await runRolloutScenario(cluster, webhook, {
        unsignedImage: images.unsigned,
        signedImage: images.signed,
        rolloutDeadlineMs: 60_000,
        onProgress: (message) => log(`scenario: ${message}`),
      });
      const { oldReplicaSet: old, newReplicaSet: next, deployment } = observed;
      log(
        `scenario: completed=${observed.completed} deployment READY ${deployment.readyColumn}, ` +
          `old ReplicaSet ${old?.desired}/${old?.pods}, new ReplicaSet ${next?.desired}/${next?.pods} ` +
          `(desired/Pods), ${observed.controllerDenials.length} denied scale-downs, timings ${JSON.stringify(observed.timings)}`,
      );
    } catch (error) {
      failed = true;
      const tails = await cluster.logTails(15);
      throw new Error(`${(error as Error).message}\nrun directory ${cluster.runDir}\n${tails}`, {
        cause: error,
      });
    }
  });

  beforeEach(() => {
    onTestFailed(() => {
      failed = true;
    });
  });

  afterAll(async () => {
    await webhook?.stop();
    await cluster?.stop(failed ? { keepRunDir: true } : {});
    if (failed) log(`kept the run directory ${cluster?.runDir}`);
  });

  it('does not complete the rollout within the deadline', () => {
    expect(observed.completed, observed.deployment.table).toBe(false);
    expect(observed.watchedSeconds).toBeGreaterThanOrEqual(60);
  });

  it('admits the signed template: the new ReplicaSet runs 1 Pod', () => {
    expect(observed.newReplicaSet).toMatchObject({ image: images.signed, desired: 1, pods: 1, readyPods: 1 });
  });

  it('keeps the old ReplicaSet at 2 replicas', () => {
    expect(observed.oldReplicaSet).toMatchObject({ image: images.unsigned, desired: 2, pods: 2 });
  });

  it("denies the deployment controller's scale-down of the old ReplicaSet, naming the image field", () => {
    const denial = observed.controllerDenials[0];
    expect(
      denial,
      `no denied ReplicaSet UPDATE by ${DEPLOYMENT_CONTROLLER_USER} in ${webhook?.logFile}`,
    ).toBeDefined();
    expect(denial).toMatchObject({
      kind: 'ReplicaSet',
      operation: 'UPDATE',
      user: DEPLOYMENT_CONTROLLER_USER,
      name: observed.oldReplicaSet?.name,
      decision: 'denied',
    });
    expect(denial?.reason).toContain('no matching signatures');
    expect(denial?.reason).toContain(images.unsigned);
    expect(denial?.reason).toContain('spec.template.spec.containers[0].image');
    log(`naive webhook denial: ${denial?.line}`);
  });

  it('leaves kubectl get deploy at 3 replicas for 2 desired', () => {
    expect(observed.deployment).toMatchObject({ desired: 2, replicas: 3, readyColumn: '3/2' });
    log(observed.deployment.table);
  });
});
