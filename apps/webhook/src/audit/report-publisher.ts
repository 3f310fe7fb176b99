// Writes one PolicyReport per audited namespace (and an openreports.io Report where that API is
// served), replacing the previous one, and deletes Signet's reports of namespaces no longer
// audited. Each call has a timeout; a missing API is reported once, not on every scan.
import type { KubeApi } from '../kube/kube-api.js';
import { statusOf } from '../kube/kube-errors.js';
import { type ListPage, listAll, PAGE_SIZE } from '../kube/lists.js';
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

interface ListedReport {
  readonly metadata?: { readonly namespace?: string; readonly name?: string };
  readonly results?: readonly { result?: string; properties?: { workload?: string } }[];
}

/** What the previous reports said: the workloads that were failing, by namespace. */
export type KnownFailures = ReadonlyMap<string, ReadonlySet<string>>;

const MANAGED = { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}` };

export class ReportPublisher {
  readonly #api: KubeApi;
  readonly #logger: Logger;
  readonly #timeout: ReturnType<KubeApi['deadline']>;
  readonly #missing = new Set<string>();

  constructor(api: KubeApi, logger: Logger, timeoutMs = 10_000) {
    this.#api = api;
    this.#logger = logger;
    this.#timeout = api.deadline(timeoutMs);
  }

  /** The report APIs this cluster serves (none: reports are skipped, said once). */
  async servedApis(): Promise<ReportApi[]> {
    const served: ReportApi[] = [];
    for (const api of REPORT_APIS) {
      try {
        await this.#api.customObjects.listCustomObjectForAllNamespaces(
          { ...everyNamespace(api), ...MANAGED, limit: 1 },
          this.#timeout,
        );
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
    const namespace = body.metadata.namespace;
    for (const api of apis) {
      const object = { ...body, apiVersion: `${api.group}/${api.version}`, kind: api.kind };
      const existing = await this.#get(api, namespace);
      const objects = this.#api.customObjects;
      if (existing === undefined) {
        await objects.createNamespacedCustomObject(
          { ...resourceOf(api), namespace, body: object },
          this.#timeout,
        );
      } else {
        // The resourceVersion read: a concurrent writer makes this a conflict, not a lost update.
        const metadata = { ...object.metadata, resourceVersion: existing.metadata?.resourceVersion };
        await objects.replaceNamespacedCustomObject(
          { ...resourceOf(api), namespace, name: REPORT_NAME, body: { ...object, metadata } },
          this.#timeout,
        );
      }
    }
  }

  /** Deletes Signet's reports outside `namespaces` (no longer audited, or no longer there). */
  async prune(apis: readonly ReportApi[], namespaces: ReadonlySet<string>): Promise<void> {
    for (const api of apis) {
      for (const item of await this.#list(api)) {
        const namespace = item.metadata?.namespace ?? '';
        if (namespaces.has(namespace) || item.metadata?.name !== REPORT_NAME) continue;
        try {
          await this.#api.customObjects.deleteNamespacedCustomObject(
            { ...resourceOf(api), namespace, name: REPORT_NAME },
            this.#timeout,
          );
        } catch (error) {
          if (statusOf(error) !== 404) throw error;
        }
      }
    }
  }

  /** The failing workloads of the existing reports, so a new leader does not repeat their Events. */
  async knownFailures(api: ReportApi): Promise<KnownFailures> {
    const known = new Map<string, Set<string>>();
    for (const item of await this.#list(api)) {
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
  ): Promise<(ListedReport & { metadata?: { resourceVersion?: string } }) | undefined> {
    try {
      return await this.#api.customObjects.getNamespacedCustomObject(
        { ...resourceOf(api), namespace, name: REPORT_NAME },
        this.#timeout,
      );
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  async #list(api: ReportApi): Promise<ListedReport[]> {
    const { items } = await listAll(
      (token) =>
        this.#api.customObjects.listCustomObjectForAllNamespaces(
          { ...everyNamespace(api), ...MANAGED, limit: PAGE_SIZE, ...(token ? { _continue: token } : {}) },
          this.#timeout,
        ) as Promise<ListPage<ListedReport>>,
    );
    return items;
  }
}

function resourceOf(api: ReportApi): { group: string; version: string; plural: string } {
  return { group: api.group, version: api.version, plural: api.plural };
}

/** The collection of every namespace (client-node names its plural `resourcePlural` there). */
function everyNamespace(api: ReportApi): { group: string; version: string; resourcePlural: string } {
  return { group: api.group, version: api.version, resourcePlural: api.plural };
}
