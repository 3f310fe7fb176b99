import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { describeCause, InvalidReferenceError, matchPolicies, parseReference } from '@signet/core';
import {
  ImageVerifier,
  Keychain,
  type PolicyCheck,
  type PolicyToVerify,
  RegistryClient,
} from '@signet/verifier';
import { parseGoDuration } from '../http/duration.js';
import { createLogger } from '../logger.js';
import { loadPolicyFile } from '../policy/policy-file.js';
import { mergePolicyObjects } from '../policy/policy-objects.js';
import { compileSnapshot } from '../policy/policy-store.js';
import { UsageError } from './usage-error.js';

export const VERIFY_OPTIONS = {
  policy: { type: 'string', multiple: true },
  'insecure-registry': { type: 'string', multiple: true },
  'docker-config': { type: 'string' },
  timeout: { type: 'string' },
  namespace: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface VerifyValues {
  readonly policy?: string[];
  readonly 'insecure-registry'?: string[];
  readonly 'docker-config'?: string;
  readonly timeout?: string;
  readonly namespace?: string;
  readonly help?: boolean;
}

function credentials(path: string | undefined) {
  const file = path ?? join(process.env.DOCKER_CONFIG ?? join(homedir(), '.docker'), 'config.json');
  try {
    return Keychain.fromDockerConfig(readFileSync(file, 'utf8'), file);
  } catch (error) {
    if (path !== undefined)
      throw new UsageError(`cannot read --docker-config ${path}: ${(error as Error).message}`);
    return undefined;
  }
}

function describeCheck(check: PolicyCheck): string[] {
  const lines = [`${check.passed ? 'PASS' : 'FAIL'} policy "${check.policy}" (${check.mode})`];
  if (!check.passed) {
    const cause = check.failure.cause === undefined ? '' : ` (${describeCause(check.failure.cause)})`;
    lines.push(`  ${check.failure.kind} failure: ${check.failure.reason}${cause}`);
  }
  for (const authority of check.authorities) {
    if (authority.passed) {
      const signer = authority.signer;
      const who =
        signer === undefined
          ? 'static pass'
          : signer.type === 'key'
            ? `key ${signer.name} (${signer.fingerprint})`
            : `${signer.issuer} ${signer.subject}`;
      lines.push(
        `  authority "${authority.authority}": pass, ${authority.counts.verified} of ${authority.counts.found} verified, signed by ${who}`,
      );
    } else {
      const cause =
        authority.failure.cause === undefined ? '' : ` (${describeCause(authority.failure.cause)})`;
      lines.push(`  authority "${authority.authority}": fail: ${authority.failure.reason}${cause}`);
    }
  }
  return lines;
}

function referenceOf(image: string): ReturnType<typeof parseReference> {
  try {
    return parseReference(image);
  } catch (error) {
    if (error instanceof InvalidReferenceError) throw new UsageError(error.message);
    throw error;
  }
}

async function verifyWith(
  values: VerifyValues,
  image: string,
  reference: ReturnType<typeof parseReference>,
  matched: readonly (PolicyToVerify | undefined)[],
  timeoutMs: number,
) {
  const verifier = new ImageVerifier({
    registry: new RegistryClient({ insecureHosts: values['insecure-registry'] ?? [] }),
  });
  const keychain = credentials(values['docker-config']);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('timed out')), timeoutMs);
  try {
    const policies = matched.filter((p): p is PolicyToVerify => p !== undefined);
    return await verifier.verifyImage(
      { path: 'image', image, reference, policies },
      {
        signal: controller.signal,
        deadline: Date.now() + timeoutMs,
        ...(keychain ? { credentials: keychain } : {}),
      },
    );
  } finally {
    clearTimeout(timer);
  }
}

async function loadSnapshot(files: readonly string[], namespace: string) {
  const loaded = await Promise.all(files.map((f) => loadPolicyFile(f, namespace)));
  return compileSnapshot(mergePolicyObjects(loaded), {
    namespace,
    logger: createLogger({ level: 'silent' }),
  });
}

/**
 * `signet verify IMAGE --policy FILE`: checks one image against the policies of the YAML file(s)
 * as the webhook would for a Pod, and prints the result per policy and authority. Exit 0 when the
 * image would be admitted, 1 when it would be denied.
 */
export async function runVerify(
  positionals: readonly string[],
  values: VerifyValues,
  out: Writable,
): Promise<number> {
  const [image, ...extra] = positionals;
  if (image === undefined || extra.length > 0) throw new UsageError('verify takes exactly one IMAGE');
  const files = values.policy ?? [];
  if (files.length === 0) throw new UsageError('verify needs --policy FILE (ClusterImagePolicy YAML)');
  const timeoutMs = parseGoDuration(values.timeout ?? '30s');
  if (timeoutMs === undefined)
    throw new UsageError(`--timeout must be a duration like 30s, got ${JSON.stringify(values.timeout)}`);
  const write = (line: string) => out.write(`${line}\n`);
  const reference = referenceOf(image);
  const { snapshot, problems } = await loadSnapshot(files, values.namespace ?? 'default');
  for (const problem of problems) write(`warning: ${problem.object}: ${problem.message}`);
  if (snapshot === undefined) {
    write('error: the policies cannot be used');
    return 1;
  }
  const match = matchPolicies(snapshot.set, reference, {
    group: '',
    version: 'v1',
    resource: 'pods',
    labels: {},
  });
  if (match.kind === 'no-match') {
    write(`${reference.normalized}: no ClusterImagePolicy matches (no-match-policy: ${match.action})`);
    return match.action === 'deny' ? 1 : 0;
  }
  const result = await verifyWith(
    values,
    image,
    reference,
    match.policies.map((p) => snapshot.verify.get(p.name)),
    timeoutMs,
  );
  write(`${reference.normalized}${result.digest && !reference.digest ? ` (${result.digest})` : ''}`);
  for (const check of result.checks) for (const line of describeCheck(check)) write(line);
  const denied = result.checks.some((c) => !c.passed && c.mode === 'enforce');
  write(denied ? 'DENIED' : 'ADMITTED');
  return denied ? 1 : 0;
}
