// What the API server does with a CREATE, without the API server: the mutating endpoint pins tags,
// the patch is applied, the validating endpoint decides. `signet verify` and `signet audit` (and
// the server's background scan) judge objects this way, so their answers are the webhook's own.
import { type AdmissionRequest, isObject, type KubeObject } from '@signet/k8s-types';
import { budgetFor, type Endpoint, type ReviewOutcome } from '../http/review.js';
import type { AdmissionService } from './admission-service.js';
import { applyPatch } from './json-patch.js';

export interface CreateJudgement {
  /** The object as validated: the request's, with the mutating endpoint's patch applied. */
  readonly object: KubeObject | null;
  readonly validated: ReviewOutcome;
  /** Image fields the mutating endpoint pinned: path (`spec.containers[0].image`) -> pinned image. */
  readonly pinned: Readonly<Record<string, string>>;
}

/** Mutate, apply the patch, validate, each within `timeoutMs` (the webhook's own budget rules). */
export async function judgeCreate(
  service: Pick<AdmissionService, 'review'>,
  request: AdmissionRequest,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<CreateJudgement> {
  const mutated = await review(service, 'mutate', request, timeoutMs, signal);
  const patch = mutated.response.patch;
  const object = patch && request.object ? applyPatch(request.object, patch) : request.object;
  const validated = await review(service, 'validate', { ...request, object }, timeoutMs, signal);
  return { object, validated, pinned: pinnedImages(request.object, object) };
}

async function review(
  service: Pick<AdmissionService, 'review'>,
  endpoint: Endpoint,
  request: AdmissionRequest,
  timeoutMs: number,
  outer: AbortSignal | undefined,
): Promise<ReviewOutcome> {
  const budgetMs = budgetFor(timeoutMs);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`timed out after ${budgetMs} ms`)), budgetMs);
  const onOuter = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onOuter, { once: true });
  try {
    return await service.review(endpoint, request, {
      signal: controller.signal,
      deadline: Date.now() + budgetMs,
      budgetMs,
    });
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onOuter);
  }
}

/** String fields that differ between `before` and `after`, by path. */
function pinnedImages(before: KubeObject | null, after: KubeObject | null): Record<string, string> {
  const pinned: Record<string, string> = {};
  const walk = (a: unknown, b: unknown, path: string) => {
    if (typeof a === 'string' && typeof b === 'string' && a !== b) pinned[path] = b;
    if (isObject(a) && isObject(b))
      for (const key of Object.keys(a)) walk(a[key], b[key], path ? `${path}.${key}` : key);
    if (Array.isArray(a) && Array.isArray(b)) {
      for (const [i, item] of a.entries()) walk(item, b[i], `${path}[${i}]`);
    }
  };
  walk(before, after, '');
  return pinned;
}
