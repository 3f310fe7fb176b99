// `signet migrate check`: reads a live cluster and lists what stands between it and a lossless
// switch from sigstore policy-controller to Signet (docs/migrating-from-policy-controller.md):
// blockers, warnings and what is fine, each with the commands that fix it. Exit 0 when nothing
// blocks, 1 when something does, 2 for bad input. Nothing is written to the cluster.
import type { Writable } from 'node:stream';
import { remotePolicyFetcher } from '@signet/verifier';
import { parseAllDocuments, stringify } from 'yaml';
import type { Command } from '../cli/command.js';
import {
  CONTEXT_FLAG,
  kubeconfigFlag,
  outputFlag,
  outputFormat,
  signetNamespaceFlag,
} from '../cli/common-flags.js';
import type { FlagValues } from '../cli/flags.js';
import { didYouMean } from '../cli/suggest.js';
import { InputError, UsageError } from '../errors.js';
import { createLogger } from '../logger.js';
import { type Finding, migrationFindings, type Severity } from '../migrate/checks.js';
import { KubeApiError, type KubeObject, readClusterState } from '../migrate/cluster-state.js';
import { WebhookPolicyEngines } from '../policy/policy-engines.js';

const OUTPUTS = ['text', 'json', 'yaml'] as const;

/** The one action of `signet migrate`. */
const ACTIONS = ['check'] as const;

export const MIGRATE_COMMAND: Command = {
  name: 'migrate',
  summary:
    'signet migrate check: find what blocks a lossless move from sigstore policy-controller in a live cluster (exit 0 nothing blocks, 1 something does, 2 bad input); reads only.',
  synopsis: 'check [--kubeconfig PATH] [flags]',
  positionals: true,
  actions: ACTIONS,
  flags: [
    kubeconfigFlag(
      'the cluster to check (read as you: CRDs, webhooks, policies, Secrets, Helm releases)',
      '$KUBECONFIG, else ~/.kube/config, else in-cluster',
    ),
    CONTEXT_FLAG,
    signetNamespaceFlag("Signet's namespace: where the Secrets policies reference must be", {
      default: 'signet-system',
      deprecatedNamespace: true,
    }),
    {
      name: 'from-namespace',
      type: 'string',
      value: 'NS',
      default: 'cosign-system',
      description: "policy-controller's namespace",
    },
    {
      name: 'release',
      type: 'string',
      value: 'NAME',
      default: 'signet',
      description: "Signet's Helm release (the one that is to own the CRDs)",
    },
    outputFlag(OUTPUTS),
  ],
  run: ({ positionals, values, stdout }) => runMigrate(positionals, values, stdout),
};

interface MigrateValues {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly 'signet-namespace'?: string;
  readonly 'from-namespace'?: string;
  readonly release?: string;
  readonly output?: string;
}

const LABELS: Record<Severity, string> = { blocker: 'BLOCKER', warning: 'WARNING', ok: 'ok' };

function parseManifest(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((doc) => doc.toJS({ maxAliasCount: 100 }) as unknown)
    .filter((o): o is KubeObject => typeof o === 'object' && o !== null && !Array.isArray(o));
}

function textReport(findings: readonly Finding[]): string {
  const lines: string[] = [];
  for (const finding of findings) {
    lines.push(`${LABELS[finding.severity].padEnd(8)} ${finding.subject}: ${finding.message}`);
    for (const command of finding.fix ?? []) lines.push(`         fix: ${command}`);
  }
  const count = (severity: Severity) => findings.filter((f) => f.severity === severity).length;
  lines.push('', `${count('blocker')} blockers, ${count('warning')} warnings, ${count('ok')} fine`);
  return lines.join('\n');
}

/** `signet migrate check [flags]`. */
export async function runMigrate(
  positionals: readonly string[],
  flags: FlagValues,
  out: Writable,
): Promise<number> {
  const [action, ...rest] = positionals;
  if (action !== 'check' || rest.length > 0) {
    const guess = action === undefined ? '' : didYouMean(action, ACTIONS);
    throw new UsageError(
      `migrate takes one action, check; got ${JSON.stringify(positionals.join(' '))}${guess}`,
    );
  }
  const values = flags as MigrateValues;
  const output = outputFormat(values.output, OUTPUTS);
  const { openKubeApi } = await import('../kube/kube-api.js');
  const api = openKubeApi({ kubeconfig: values.kubeconfig, context: values.context });
  const engines = new WebhookPolicyEngines(createLogger({ level: 'silent' }));
  try {
    const namespace = values['signet-namespace'] ?? 'signet-system';
    const state = await readClusterState(
      api,
      {
        signetNamespace: namespace,
        fromNamespace: values['from-namespace'] ?? 'cosign-system',
        signetRelease: values.release ?? 'signet',
      },
      parseManifest,
    ).catch((error: unknown) => {
      if (error instanceof KubeApiError)
        throw new InputError(`cannot read the cluster: ${error.message}`, { cause: error });
      throw error;
    });
    const findings = await migrationFindings(state, {
      namespace,
      engines,
      fetchRemotePolicy: remotePolicyFetcher(),
    });
    const text =
      output === 'json'
        ? JSON.stringify({ findings }, null, 2)
        : output === 'yaml'
          ? stringify({ findings }, { lineWidth: 0 }).trimEnd()
          : textReport(findings);
    out.write(`${text}\n`);
    return findings.some((f) => f.severity === 'blocker') ? 1 : 0;
  } finally {
    await engines.close();
  }
}
