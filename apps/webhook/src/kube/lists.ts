// Whole lists from client-node's list calls: pages of 500 followed to the end (the API server keeps
// one resourceVersion across the pages), and their items as the API's JSON, which is what Signet's
// parsers and the admission pipeline read.

/** What a list call answers: a typed list (`metadata._continue`) or a custom resource's JSON (`continue`). */
export interface ListPage<T> {
  readonly items: readonly T[];
  readonly metadata?: {
    readonly _continue?: string;
    readonly continue?: string;
    readonly resourceVersion?: string;
  };
}

export interface WholeList<T> {
  readonly items: T[];
  readonly resourceVersion: string;
}

export const PAGE_SIZE = 500;

/**
 * Every item of a collection: `page(continueToken)` is called with `undefined`, then with each
 * page's continue token, until there is none. More than `maxItems` items throw: every cache Signet
 * keeps has a bound.
 */
export async function listAll<T>(
  page: (continueToken: string | undefined) => Promise<ListPage<T>>,
  maxItems = Number.POSITIVE_INFINITY,
): Promise<WholeList<T>> {
  const items: T[] = [];
  let token: string | undefined;
  let resourceVersion = '';
  do {
    const answer = await page(token);
    items.push(...answer.items);
    if (items.length > maxItems) throw new RangeError(`more than the ${maxItems} objects kept`);
    token = answer.metadata?._continue || answer.metadata?.continue || undefined;
    resourceVersion = answer.metadata?.resourceVersion ?? resourceVersion;
  } while (token !== undefined);
  return { items, resourceVersion };
}

/**
 * An object of client-node's typed models as the API's JSON. For the kinds Signet reads this way
 * (Pods, workloads, Secrets, ConfigMaps, webhook configurations, CRDs' metadata and conversion),
 * the models' property names are the JSON names; dates, which the models turn into `Date`, become
 * RFC 3339 strings again.
 */
export function apiJson<T>(typed: unknown): T {
  return JSON.parse(JSON.stringify(typed)) as T;
}
