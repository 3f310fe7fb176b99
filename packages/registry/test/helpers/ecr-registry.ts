// An ECR stand-in built from real programs, shared by the registry's credential tests and the
// verifier's end-to-end one: moto in server mode serves AWS STS (AssumeRoleWithWebIdentity) and ECR
// (GetAuthorizationToken); CNCF distribution asks for Basic credentials, with the user and password
// moto's GetAuthorizationToken hands out, and serves an image signed by the real cosign. The
// process environment is set as EKS sets it for IRSA, so the real AWS SDK runs its default chain.
// Only the mapping of the loopback registry host to an ECR registry ID is test-specific (real ECR
// hosts are `<account>.dkr.ecr.<region>.amazonaws.com`).
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EcrRegistry } from '../../src/cloud/ecr.js';
import { ensureTestTools, loadTestbed, type Testbed } from './testbed.js';

/** moto's default account, and the password its GetAuthorizationToken issues for it. */
export const ACCOUNT = '123456789012';
export const ECR_PASSWORD = `${ACCOUNT}-auth-token`;
/** moto's tokens expire at this fixed time (2015-01-01T00:00:00Z). */
export const MOTO_EXPIRY = Date.UTC(2015, 0, 1);

export interface EcrRegistryBed {
  readonly testbed: typeof Testbed;
  readonly group: Testbed.ProcessGroup;
  readonly moto: Testbed.Moto;
  readonly runDir: string;
  readonly registryHost: string;
  /** An image in the registry, by digest, signed with `publicKey`'s key (legacy `.sig`). */
  readonly imageRef: string;
  readonly publicKey: string;
  /** The ECR registry the loopback host stands for. */
  readonly registryOf: (host: string) => EcrRegistry | undefined;
  /** AWS API requests moto has answered so far (its request log). */
  apiRequests(): Promise<number>;
  /** Stops the programs, restores the environment and removes the run directory. */
  stop(): Promise<void>;
}

export async function startEcrRegistry(prefix: string): Promise<EcrRegistryBed> {
  const saved = { ...process.env };
  const testbed = await loadTestbed();
  const { crane } = await ensureTestTools(testbed, ['registry', 'crane', 'cosign']);
  const runDir = await testbed.createRunDir(prefix);
  const group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
  const stop = async () => {
    process.env = saved;
    await group.stopAll();
    if (!process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  };
  try {
    return await start(testbed, crane, runDir, group, stop);
  } catch (error) {
    await stop();
    throw error;
  }
}

async function start(
  testbed: typeof Testbed,
  crane: string,
  runDir: string,
  group: Testbed.ProcessGroup,
  stop: () => Promise<void>,
): Promise<EcrRegistryBed> {
  const moto = await testbed.startMoto({ group });
  // Pushed and signed while open, then served with Basic auth from the same storage.
  const open = await testbed.startRegistry({ referrers: false, group });
  const registryHost = open.host;
  const digest = await testbed.pushRandomImage(open, 'team/app', 'v1', { crane, workDir: runDir });
  const imageRef = `${open.host}/team/app@${digest}`;
  const cosign = await testbed.createCosign({ workDir: runDir });
  const key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
  await cosign.signLegacyKeyed(imageRef, key);
  const publicKey = await readFile(key.publicKey, 'utf8');
  await open.stop();
  const htpasswd = join(runDir, 'htpasswd');
  await testbed.writeHtpasswd(htpasswd, { AWS: ECR_PASSWORD });
  await testbed.startRegistry({
    referrers: false,
    group,
    port: Number(registryHost.split(':')[1]),
    htpasswdFile: htpasswd,
  });

  // What EKS puts into a Pod whose ServiceAccount has an eks.amazonaws.com/role-arn annotation.
  const tokenFile = join(runDir, 'eks.amazonaws.com', 'serviceaccount', 'token');
  await mkdir(join(tokenFile, '..'), { recursive: true });
  await writeFile(
    tokenFile,
    'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6c2lnbmV0OnNpZ25ldCJ9.c2ln',
  );
  for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
  Object.assign(process.env, {
    // The testbed's tool cache stays where it is (it is found under HOME), for the proxy test.
    SIGNET_CACHE_DIR: testbed.cacheRoot(),
    HOME: runDir,
    AWS_ROLE_ARN: `arn:aws:iam::${ACCOUNT}:role/signet`,
    AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL: moto.url,
    AWS_EC2_METADATA_DISABLED: 'true',
  });
  return {
    testbed,
    group,
    moto,
    runDir,
    registryHost,
    imageRef,
    publicKey,
    registryOf: (host) =>
      host === registryHost ? { kind: 'private', registryId: ACCOUNT, region: 'us-east-1' } : undefined,
    apiRequests: async () => ((await moto.process.log()).match(/"POST \/ HTTP\/1\.1" 200/g) ?? []).length,
    stop,
  };
}
