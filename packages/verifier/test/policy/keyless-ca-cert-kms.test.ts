// policy-controller's `valid-keylessref-awskms.yaml` and its v1beta1 twin (read from its v0.15.1
// module): keyless authorities whose `ca-cert` names an AWS KMS key. Upstream accepts them, never
// reads a CA from a KMS (its reconciler fetches only `key.kms`; its verifier never reads `ca-cert`
// at all) and verifies them against the Fulcio roots of its trust root. Signet gives the same
// outcome: they compile without any KMS, and certificates from the default trust root's CA pass
// with the policy's identities while another CA's do not.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseClusterImagePolicy } from '@signet/k8s-types';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { compileAuthorities } from '../../src/policy/compile.js';
import { verifyPolicy } from '../../src/policy/verify-policy.js';
import { trustRootResolver } from '../../src/trust/compile.js';
import {
  certify,
  DIGEST,
  hashedRekordBody,
  type Infra,
  legacySignature,
  logEntry,
  makeInfra,
  setAnnotation,
  signBytes,
  simpleSigningPayload,
} from '../support/fixtures.js';
import { loadTestbed } from '../support/registry-helpers.js';

const FILES = [
  'test/testdata/policy-controller/valid/valid-keylessref-awskms.yaml',
  'test/testdata/policy-controller/valid/v1beta1-valid-keylessref-awskms.yaml',
];
// An identity the files' regular expressions accept: the e2e tests' service account.
const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const SUBJECT = 'https://kubernetes.io/namespaces/default/serviceaccounts/default';

describe('keyless ca-cert given as kms, as policy-controller v0.15.1 treats it', () => {
  let upstream = '';
  let trusted: Infra;
  let other: Infra;

  beforeAll(async () => {
    upstream = await (await loadTestbed()).policyControllerModule();
    [trusted, other] = await Promise.all([makeInfra(), makeInfra()]);
  });

  async function signature(services: Infra) {
    const key = await certify(services.ca, { san: SUBJECT, issuer: ISSUER });
    const payload = simpleSigningPayload(DIGEST);
    const signed = signBytes(key, payload);
    const entry = await logEntry(services.tlog, hashedRekordBody(payload, signed, key.certificatePem));
    return legacySignature(payload, signed, {
      certificatePem: key.certificatePem,
      set: setAnnotation(entry),
    });
  }

  for (const file of FILES) {
    it(`${file}: compiles with no KMS and verifies against the default trust root`, async () => {
      const [document] = parseAllDocuments(await readFile(join(upstream, file), 'utf8'));
      const cip = parseClusterImagePolicy(document?.toJS());
      const kmsCaCerts = cip.spec.authorities.map((a) => a.keyless?.['ca-cert']?.kms);
      expect(kmsCaCerts).toHaveLength(4);
      expect(kmsCaCerts.every((uri) => uri?.startsWith('awskms://'))).toBe(true);
      // No kmsKeys in the context: a KMS lookup would fail the compile.
      const compiled = await compileAuthorities(cip, {
        trustRoots: trustRootResolver([], { publicGood: trusted.trustRoot }),
      });
      expect(compiled.authorities.map((a) => (a.type === 'static' ? 'static' : a.state.kind))).toEqual([
        'ready',
        'ready',
        'ready',
        'ready',
      ]);
      const good = await signature(trusted);
      const foreign = await signature(other);
      const result = await verifyPolicy(compiled, DIGEST, () => [good]);
      expect(result.passed).toBe(true);
      expect(result.authorities.every((a) => a.passed)).toBe(true);
      expect((await verifyPolicy(compiled, DIGEST, () => [foreign])).passed).toBe(false);
    });
  }
});
