// The traps of moving from sigstore policy-controller to Signet, found in a cluster's state
// (docs/migrating-from-policy-controller.md gives the order of steps that avoids them):
// - its CRDs convert through policy-controller's webhook: once that is gone, no policy stored in
//   another version can be read (Signet cannot load them, kubectl get fails);
// - its chart installs the CRDs as templates without helm.sh/resource-policy: keep, so
//   `helm uninstall` deletes the CRDs and with them every ClusterImagePolicy and TrustRoot;
// - its reconcilers put finalizers on every policy and TrustRoot that nothing removes once it is
//   gone (deleting one hangs);
// - keys in Secrets live in policy-controller's namespace, and its config ConfigMap there too;
// - its admission webhooks stay registered if its Pods go first;
// - and which policies Signet compiles as they are.
// Signet's own ImagePolicies and exceptions (policy.signet.dev) are said to be Signet's alone:
// nothing of policy-controller's becomes one, and policy-controller never enforces them.
import { isObject } from '@signet/k8s-types';
import { collectPolicyObjects } from '../policy/policy-objects.js';
import { desiredStatuses } from '../policy/policy-status.js';
import { type CompileOptions, compileSnapshot } from '../policy/policy-store.js';
import {
  type ClusterState,
  type HelmRelease,
  type KubeObject,
  POLICY_CRDS,
  SIGNET_KINDS,
} from './cluster-state.js';

export type Severity = 'blocker' | 'warning' | 'ok';

export interface Finding {
  readonly severity: Severity;
  /** `crd/NAME`, `clusterimagepolicy/NAME`, `webhook/NAME`, `secret/NS/NAME`, `config`. */
  readonly subject: string;
  readonly message: string;
  /** Commands that fix it, in order. */
  readonly fix?: readonly string[];
}

const FINALIZERS: Readonly<Record<string, string>> = {
  ClusterImagePolicy: 'clusterimagepolicies.policy.sigstore.dev',
  TrustRoot: 'trustroots.policy.sigstore.dev',
};

const KEEP = 'helm.sh/resource-policy';

function nameOf(object: KubeObject): string {
  return object.metadata?.name ?? '';
}

function adoptCommands(crd: string, state: ClusterState): string[] {
  return [
    `kubectl annotate crd ${crd} meta.helm.sh/release-name=${state.signetRelease} meta.helm.sh/release-namespace=${state.signetNamespace} --overwrite`,
    `kubectl label crd ${crd} app.kubernetes.io/managed-by=Helm --overwrite`,
  ];
}

function conversionFinding(name: string, crd: KubeObject): Finding | undefined {
  const conversion = (
    crd.spec as {
      conversion?: {
        strategy?: string;
        webhook?: { clientConfig?: { service?: { namespace?: string; name?: string } } };
      };
    }
  )?.conversion;
  if (conversion?.strategy !== 'Webhook') return undefined;
  const service = conversion.webhook?.clientConfig?.service;
  const target = service ? `the Service ${service.namespace}/${service.name}` : 'a webhook';
  return {
    severity: 'blocker',
    subject: `crd/${name}`,
    message: `converts between versions through ${target} (policy-controller's): once that is gone, every read of an object stored in another version fails (Signet cannot load the policies; kubectl get fails). Both versions have one schema: no conversion is needed`,
    fix: [
      `kubectl patch crd ${name} --type=json -p '[{"op":"replace","path":"/spec/conversion","value":{"strategy":"None"}}]'`,
    ],
  };
}

function ownershipFinding(name: string, crd: KubeObject, state: ClusterState): Finding {
  const annotations = crd.metadata?.annotations ?? {};
  const release = annotations['meta.helm.sh/release-name'];
  const namespace = annotations['meta.helm.sh/release-namespace'];
  const subject = `crd/${name}`;
  if (release === state.signetRelease && namespace === state.signetNamespace) {
    return {
      severity: 'ok',
      subject,
      message: `managed by Signet's release ${namespace}/${release}, kept on uninstall`,
    };
  }
  if (release === undefined) {
    return {
      severity: 'warning',
      subject,
      message:
        "not owned by a Helm release (applied with kubectl or kustomize): never delete it with the rest of policy-controller. For Signet's chart to manage it (installCRDs=true), hand it over first",
      fix: adoptCommands(name, state),
    };
  }
  const record: HelmRelease | undefined = state.releases.find(
    (r) => r.name === release && r.namespace === namespace,
  );
  const inManifest = record?.manifestObjects.find(
    (o) => o.kind === 'CustomResourceDefinition' && nameOf(o) === name,
  );
  if (inManifest !== undefined && inManifest.metadata?.annotations?.[KEEP] !== 'keep') {
    const chart = record?.chart
      ? ` <repo>/${record.chart.name} --version ${record.chart.version}`
      : ' <its chart>';
    return {
      severity: 'blocker',
      subject,
      message: `in the manifest of Helm release ${namespace}/${release} without ${KEEP}: keep: \`helm uninstall ${release}\` deletes it, and with it every object of it. Keep it, then take it out of that release (Helm skips deleting objects annotated keep on upgrade)`,
      fix: [
        `kubectl annotate crd ${name} ${KEEP}=keep --overwrite`,
        `helm upgrade ${release}${chart} --namespace ${namespace} --reuse-values --set installCRDs=false`,
      ],
    };
  }
  if (inManifest !== undefined) {
    return {
      severity: 'ok',
      subject,
      message: `in release ${namespace}/${release} with ${KEEP}: keep: helm uninstall keeps it`,
    };
  }
  return {
    severity: 'warning',
    subject,
    message: `still annotated as Helm release ${namespace}/${release}'s${record ? ', which no longer installs it' : ' (no such release)'}: Signet's chart refuses to install it (installCRDs=true) until it is handed over`,
    fix: adoptCommands(name, state),
  };
}

function crdFindings(state: ClusterState): Finding[] {
  return POLICY_CRDS.flatMap((name): Finding[] => {
    const crd = state.crds[name];
    if (crd === undefined)
      return [
        {
          severity: 'ok',
          subject: `crd/${name}`,
          message: "not installed: Signet's chart installs it (installCRDs=true)",
        },
      ];
    const conversion = conversionFinding(name, crd);
    return [...(conversion ? [conversion] : []), ownershipFinding(name, crd, state)];
  });
}

interface Webhook {
  readonly name?: string;
  readonly failurePolicy?: string;
  readonly clientConfig?: { service?: { namespace?: string; name?: string } };
}

function webhookFindings(state: ClusterState): Finding[] {
  const findings: Finding[] = [];
  let signet = 0;
  for (const [kind, configs] of [
    ['validatingwebhookconfiguration', state.validatingWebhooks],
    ['mutatingwebhookconfiguration', state.mutatingWebhooks],
  ] as const) {
    for (const config of configs) {
      const hooks = ((config as { webhooks?: Webhook[] }).webhooks ?? []).filter(
        (h) => h.clientConfig?.service,
      );
      if (hooks.some((h) => h.clientConfig?.service?.namespace === state.signetNamespace)) signet += 1;
      const theirs = hooks.filter((h) => h.clientConfig?.service?.namespace === state.fromNamespace);
      if (theirs.length === 0) continue;
      const failing = theirs.some((h) => (h.failurePolicy ?? 'Fail') === 'Fail');
      findings.push({
        severity: 'warning',
        subject: `${kind}/${nameOf(config)}`,
        message: `policy-controller's (${theirs.map((h) => h.name).join(', ')})${failing ? ', failurePolicy Fail' : ''}: \`helm uninstall\` of policy-controller removes it; if its Pods stop first, the writes it intercepts ${failing ? 'are refused' : 'go unchecked'} until it is removed`,
        fix: [
          `kubectl delete ${kind} ${nameOf(config)}   # only if policy-controller was not installed with Helm`,
        ],
      });
    }
  }
  findings.push(
    signet > 0
      ? {
          severity: 'ok',
          subject: 'signet',
          message: `Signet's webhooks are registered (${signet} configurations)`,
        }
      : {
          severity: 'ok',
          subject: 'signet',
          message: `no webhook of Signet's namespace ${state.signetNamespace} is registered yet`,
        },
  );
  return findings;
}

function finalizerFinding(kind: 'ClusterImagePolicy' | 'TrustRoot', object: KubeObject): Finding | undefined {
  const finalizers = object.metadata?.finalizers ?? [];
  const index = finalizers.indexOf(FINALIZERS[kind] ?? '');
  if (index < 0) return undefined;
  const resource = kind.toLowerCase();
  const patch = JSON.stringify([
    { op: 'test', path: `/metadata/finalizers/${index}`, value: FINALIZERS[kind] },
    { op: 'remove', path: `/metadata/finalizers/${index}` },
  ]);
  return {
    severity: 'warning',
    subject: `${resource}/${nameOf(object)}`,
    message: `carries policy-controller's finalizer ${FINALIZERS[kind]}: once policy-controller is gone nothing removes it (deleting the object hangs), and Signet leaves its status to policy-controller. Remove it after policy-controller is uninstalled`,
    fix: [`kubectl patch ${resource} ${nameOf(object)} --type=json -p '${patch}'`],
  };
}

interface SecretReference {
  readonly name: string;
  /** Where Signet reads it: the namespace given, else Signet's own. */
  readonly namespace: string;
  readonly explicit: boolean;
}

function referenceOf(ref: Record<string, unknown>, signetNamespace: string): SecretReference {
  const explicit = typeof ref.namespace === 'string' && ref.namespace !== '';
  return { name: String(ref.name), namespace: explicit ? String(ref.namespace) : signetNamespace, explicit };
}

/** Every `secretRef` a policy names (keys, CA certificates), wherever in the spec. */
function secretRefs(spec: unknown, signetNamespace: string): SecretReference[] {
  const found: SecretReference[] = [];
  const pending: { value: unknown; depth: number }[] = [{ value: spec, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, depth } = next;
    if (depth > 12 || (!Array.isArray(value) && !isObject(value))) continue;
    const entries: [string, unknown][] = Array.isArray(value)
      ? value.map((item): [string, unknown] => ['', item])
      : Object.entries(value);
    for (const [key, inner] of entries) {
      if (key === 'secretRef' && isObject(inner) && typeof inner.name === 'string')
        found.push(referenceOf(inner, signetNamespace));
      else pending.push({ value: inner, depth: depth + 1 });
    }
  }
  return found;
}

function copySecretCommand(name: string, from: string, to: string): string {
  return `kubectl get secret ${name} -n ${from} -o yaml | sed -e '/^  namespace:/d' -e '/^  uid:/d' -e '/^  resourceVersion:/d' -e '/^  creationTimestamp:/d' | kubectl apply -n ${to} -f -`;
}

function missingSecret(state: ClusterState, policy: KubeObject, ref: SecretReference): Finding {
  const key = `${ref.namespace}/${ref.name}`;
  const there =
    state.fromSecrets.includes(ref.name) && (!ref.explicit || ref.namespace === state.fromNamespace);
  const elsewhere = ref.explicit && ref.namespace !== state.signetNamespace;
  const why = elsewhere ? 'does not read (Signet reads Secrets of its own namespace only)' : 'does not find';
  const where = there ? `; it is in policy-controller's namespace ${state.fromNamespace}` : '';
  const edit = `# and set secretRef.namespace to ${state.signetNamespace} (or leave it out) in ClusterImagePolicy ${nameOf(policy)}`;
  return {
    severity: 'blocker',
    subject: `secret/${key}`,
    message: `ClusterImagePolicy ${nameOf(policy)} reads its key from Secret ${key}, which Signet ${why}${where}: until it is there, every image the policy matches fails that authority`,
    ...(there
      ? {
          fix: [
            copySecretCommand(ref.name, state.fromNamespace, state.signetNamespace),
            ...(elsewhere ? [edit] : []),
          ],
        }
      : {}),
  };
}

function secretFindings(state: ClusterState, policies: readonly KubeObject[]): Finding[] {
  const present = new Set(
    state.signetSecrets.map((s) => `${s.metadata?.namespace ?? state.signetNamespace}/${nameOf(s)}`),
  );
  const findings = new Map<string, Finding>();
  for (const policy of policies) {
    for (const ref of secretRefs(policy.spec, state.signetNamespace)) {
      const key = `${ref.namespace}/${ref.name}`;
      if (!present.has(key) && !findings.has(key)) findings.set(key, missingSecret(state, policy, ref));
    }
  }
  return [...findings.values()];
}

function configFindings(state: ClusterState): Finding[] {
  const theirs = (state.fromConfig?.data ?? {}) as Record<string, string>;
  const ours = (state.signetConfigMaps.find((c) => nameOf(c) === 'config-policy-controller')?.data ??
    {}) as Record<string, string>;
  const keys = [
    ['no-match-policy', 'config.noMatchPolicy', 'deny'],
    ['fail-on-empty-authorities', 'config.failOnEmptyAuthorities', 'true'],
    ['enable-oci11', 'config.enableOCI11', 'false'],
  ] as const;
  const differ = keys.filter(([key, , fallback]) => (theirs[key] ?? fallback) !== (ours[key] ?? fallback));
  if (state.fromConfig === undefined || differ.length === 0) return [];
  return [
    {
      severity: 'warning',
      subject: `configmap/${state.fromNamespace}/config-policy-controller`,
      message: `policy-controller's config says ${differ.map(([key, , fallback]) => `${key}: ${theirs[key] ?? fallback}`).join(', ')}; Signet's says ${differ.map(([key, , fallback]) => `${key}: ${ours[key] ?? fallback}`).join(', ')}: set the chart's values to keep the same behaviour`,
      fix: [
        `helm upgrade ${state.signetRelease} ... --reuse-values ${differ.map(([key, value, fallback]) => `--set ${value}=${theirs[key] ?? fallback}`).join(' ')}`,
      ],
    },
  ];
}

function usesKms(policy: KubeObject): boolean {
  const authorities = (policy.spec as { authorities?: { key?: { kms?: unknown } }[] } | undefined)
    ?.authorities;
  return (authorities ?? []).some((a) => typeof a?.key?.kms === 'string' && a.key.kms !== '');
}

async function compileFindings(
  state: ClusterState,
  policies: readonly KubeObject[],
  trustRoots: readonly KubeObject[],
  compile: CompileOptions,
): Promise<Finding[]> {
  const objects = collectPolicyObjects(
    [...policies, ...trustRoots, ...state.signetSecrets, ...state.signetConfigMaps],
    state.signetNamespace,
  );
  const { snapshot } = await compileSnapshot(objects, compile);
  if (snapshot === undefined) return [];
  const kms = new Set(policies.filter(usesKms).map(nameOf));
  return desiredStatuses(snapshot).map((status): Finding => {
    const subject = `${status.kind.toLowerCase()}/${status.name}`;
    const { condition } = status;
    if (condition.status === 'True')
      return { severity: 'ok', subject, message: `Signet: ${condition.message}` };
    // KMS keys are fetched by Signet with its own cloud identity, which this check does not have.
    if (status.kind === 'ClusterImagePolicy' && kms.has(status.name) && compile.kmsKeys === undefined) {
      return {
        severity: 'warning',
        subject,
        message:
          "uses a KMS key, which Signet fetches when it compiles the policy, with its own identity (the chart's serviceAccount.annotations, kms.env): not checked here; kubectl get clusterimagepolicies says whether it compiled once Signet runs",
      };
    }
    const passing = condition.reason === 'Unavailable';
    return {
      severity: passing ? 'warning' : 'blocker',
      subject,
      message: `Signet cannot use it as it is (${condition.reason}): ${condition.message}`,
    };
  });
}

/**
 * Signet's own kinds, which policy-controller does not have: nothing is carried over, and what is
 * there is enforced by Signet alone (with policy-controller still in the path, it is not enforced).
 */
function signetKindFindings(state: ClusterState): Finding[] {
  return SIGNET_KINDS.map(({ kind, plural }): Finding => {
    const subject = `crd/${plural}.policy.signet.dev`;
    const own = `${kind} (policy.signet.dev) is Signet's own; policy-controller has no such kind, so nothing of it is carried over`;
    const objects = state.signetObjects?.[kind];
    if (objects === undefined)
      return {
        severity: 'ok',
        subject,
        message: `${own}. Not installed: Signet's chart installs it (installCRDs=true)`,
      };
    if (!Array.isArray(objects))
      return {
        severity: 'warning',
        subject,
        message: `${own}. Cannot be listed: ${(objects as { error: string }).error}`,
      };
    if (objects.length === 0)
      return { severity: 'ok', subject, message: `${own}. None yet: teams write them once Signet runs` };
    const namespaces = [...new Set(objects.map((o) => o.metadata?.namespace ?? ''))].sort();
    const shown = namespaces.length > 10 ? [...namespaces.slice(0, 10), '…'] : namespaces;
    const running = state.fromDeployments.some(
      (d) => Number((d.status as { readyReplicas?: number })?.readyReplicas ?? 0) > 0,
    );
    return {
      severity: 'ok',
      subject,
      message: `${own}. ${objects.length} in ${namespaces.length === 1 ? 'namespace' : 'namespaces'} ${shown.join(', ')}: only Signet enforces them${running ? ' (policy-controller, still running, ignores them)' : ''}`,
    };
  });
}

/** Every finding, blockers first. */
export async function migrationFindings(state: ClusterState, compile: CompileOptions): Promise<Finding[]> {
  const findings: Finding[] = [
    ...crdFindings(state),
    ...webhookFindings(state),
    ...signetKindFindings(state),
  ];
  const readable = (list: readonly KubeObject[] | { error: string }, what: string): readonly KubeObject[] => {
    if (!Array.isArray(list)) {
      findings.push({
        severity: 'blocker',
        subject: what,
        message: `cannot be listed: ${(list as { error: string }).error}`,
      });
      return [];
    }
    return list;
  };
  const policies = readable(state.policies, 'clusterimagepolicies');
  const trustRoots = readable(state.trustRoots, 'trustroots');
  for (const policy of policies) {
    const finding = finalizerFinding('ClusterImagePolicy', policy);
    if (finding) findings.push(finding);
  }
  for (const root of trustRoots) {
    const finding = finalizerFinding('TrustRoot', root);
    if (finding) findings.push(finding);
  }
  findings.push(...secretFindings(state, policies), ...configFindings(state));
  if (Array.isArray(state.policies))
    findings.push(...(await compileFindings(state, policies, trustRoots, compile)));
  const running = state.fromDeployments.filter(
    (d) => Number((d.status as { readyReplicas?: number })?.readyReplicas ?? 0) > 0,
  );
  if (running.length > 0) {
    findings.push({
      severity: 'ok',
      subject: `namespace/${state.fromNamespace}`,
      message: `policy-controller still runs there (${running.map(nameOf).join(', ')})`,
    });
  }
  const order: Record<Severity, number> = { blocker: 0, warning: 1, ok: 2 };
  return findings.sort((a, b) => order[a.severity] - order[b.severity]);
}
