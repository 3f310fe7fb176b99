// Writes one PolicyReport per audited namespace (and an openreports.io Report where that API is
// served), replacing the previous one, and deletes Signet's reports of namespaces no longer
// audited. Each call has a timeout; a missing API is reported once, not on every scan.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { statusOf, withTimeout } from '../kube/deadline.js';
import type { Logger } from '../logger.js';
import { MANAGED_BY, MANAGED_BY_LABEL, type PolicyReportBody, REPORT_NAME } from './policy-reports.js';

interface ReportApi {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
}

export const REPORT_APIS: readonly ReportApi[] = [
  { group: 'wgpolicyk8s.io', version: 'v1alpha2', plural: 'policyreports', kind: 'PolicyReport' },
  { group: 'openreports.io', version: 'v1alpha1', plural: 'reports', kind: 'Report' },
];

interface Listed {
  readonly items?: readonly { metadata?: { namespace?: string; name?: string } }[];
}

/** What the previous reports said: the workloads that were failing, by namespace. */
export type KnownFailures = ReadonlyMap<string, ReadonlySet<string>>;

export class ReportPublisher {
  readonly #api: CustomObjectsApi;
  readonly #logger: Logger;
  readonly #timeoutMs: number;
  readonly #missing = new Set<string>();

  constructor(kubeConfig: KubeConfig, logger: Logger, timeoutMs = 10_000) {
    this.#api = kubeConfig.makeApiClient(CustomObjectsApi);
    this.#logger = logger;
    this.#timeoutMs = timeoutMs;
  }

  /** The report APIs this cluster serves (none: reports are skipped, said once). */
  async servedApis(): Promise<ReportApi[]> {
    const served: ReportApi[] = [];
    for (const api of REPORT_APIS) {
      try {
        await this.#call(`listing ${api.plural}.${api.group}`, this.#list(api, 1));
        served.push(api);
        this.#missing.delete(api.group);
      } catch (error) {
        if (statusOf(error) !== 404) throw error;
        if (!this.#missing.has(api.group))
          this.#logger.info({ api: `${api.group}/${api.version}` }, 'report API not served; skipping it');
        this.#missing.add(api.group);
      }
    }
    return served;
  }

  /** Creates or replaces the report of `body`'s namespace, under every served API. */
  async publish(apis: readonly ReportApi[], body: PolicyReportBody): Promise<void> {
    for (const api of apis) {
      const namespace = body.metadata.namespace;
      const object = { ...body, apiVersion: `${api.group}/${api.version}`, kind: api.kind };
      const coordinates = { group: api.group, version: api.version, plural: api.plural, namespace };
      const existing = await this.#get(api, namespace);
      if (existing === undefined) {
        await this.#call(
          `creating ${api.kind} ${namespace}/${REPORT_NAME}`,
          this.#api.createNamespacedCustomObject({ ...coordinates, body: object }),
        );
      } else {
        const metadata = { ...object.metadata, resourceVersion: existing.metadata?.resourceVersion };
        await this.#call(
          `replacing ${api.kind} ${namespace}/${REPORT_NAME}`,
          this.#api.replaceNamespacedCustomObject({
            ...coordinates,
            name: REPORT_NAME,
            body: { ...object, metadata },
          }),
        );
      }
    }
  }

  /** Deletes Signet's reports outside `namespaces` (no longer audited, or no longer there). */
  async prune(apis: readonly ReportApi[], namespaces: ReadonlySet<string>): Promise<void> {
    for (const api of apis) {
      const listed = (await this.#call(`listing ${api.plural}`, this.#list(api))) as Listed;
      for (const item of listed.items ?? []) {
        const namespace = item.metadata?.namespace ?? '';
        if (namespaces.has(namespace) || item.metadata?.name !== REPORT_NAME) continue;
        try {
          await this.#call(
            `deleting ${api.kind} ${namespace}/${REPORT_NAME}`,
            this.#api.deleteNamespacedCustomObject({
              group: api.group,
              version: api.version,
              plural: api.plural,
              namespace,
              name: REPORT_NAME,
            }),
          );
        } catch (error) {
          if (statusOf(error) !== 404) throw error;
        }
      }
    }
  }

  /** The failing workloads of the existing reports, so a new leader does not repeat their Events. */
  async knownFailures(api: ReportApi): Promise<KnownFailures> {
    const listed = (await this.#call(`listing ${api.plural}`, this.#list(api))) as {
      items?: {
        metadata?: { namespace?: string };
        results?: { result?: string; properties?: { workload?: string } }[];
      }[];
    };
    const known = new Map<string, Set<string>>();
    for (const item of listed.items ?? []) {
      const failing = new Set<string>();
      for (const result of item.results ?? [])
        if (result.result === 'fail' && result.properties?.workload) failing.add(result.properties.workload);
      known.set(item.metadata?.namespace ?? '', failing);
    }
    return known;
  }

  async #get(
    api: ReportApi,
    namespace: string,
  ): Promise<{ metadata?: { resourceVersion?: string } } | undefined> {
    try {
      return (await this.#call(
        `reading ${api.kind} ${namespace}/${REPORT_NAME}`,
        this.#api.getNamespacedCustomObject({
          group: api.group,
          version: api.version,
          plural: api.plural,
          namespace,
          name: REPORT_NAME,
        }),
      )) as { metadata?: { resourceVersion?: string } };
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  #list(api: ReportApi, limit?: number): Promise<unknown> {
    return this.#api.listClusterCustomObject({
      group: api.group,
      version: api.version,
      plural: api.plural,
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
      ...(limit ? { limit } : {}),
    });
  }

  #call<T>(what: string, call: Promise<T>): Promise<T> {
    return withTimeout(what, this.#timeoutMs, call);
  }
}
