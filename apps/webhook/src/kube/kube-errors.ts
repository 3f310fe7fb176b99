// What went wrong with a Kubernetes API call, in Signet's terms. client-node fails in three shapes:
// a generated API's `ApiException` (`code`: the HTTP status, `body`: the API server's Status), a
// watch's `Error` with `statusCode`, and undici's `fetch failed` or a timeout when nothing answered.

/** A Kubernetes API call failed: the server answered `status`, or nothing answered (`status` 0). */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  /** `HTTP_<status>`, `TIMEOUT` or `UNREACHABLE`. */
  readonly code: string;
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.code = status > 0 ? `HTTP_${status}` : reason === 'Timeout' ? 'TIMEOUT' : 'UNREACHABLE';
  }
}

interface ApiStatus {
  readonly reason?: unknown;
  readonly message?: unknown;
}

/** The HTTP status of a failed call, when the API server answered one. */
export function statusOf(error: unknown): number | undefined {
  if (error instanceof KubeApiError) return error.status > 0 ? error.status : undefined;
  const failed = error as { code?: unknown; statusCode?: unknown; body?: unknown } | null;
  if (typeof failed?.code === 'number' && failed.code >= 100 && failed.code < 600) return failed.code;
  if (typeof failed?.statusCode === 'number') return failed.statusCode;
  return undefined;
}

function statusBody(error: unknown): ApiStatus {
  const body = (error as { body?: unknown } | null)?.body;
  if (typeof body === 'object' && body !== null) return body as ApiStatus;
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as ApiStatus;
    } catch {
      return { message: body.slice(0, 512) };
    }
  }
  return {};
}

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return (
    name === 'TimeoutError' || (name === 'AbortError' && /timeout/i.test(String((error as Error).message)))
  );
}

/**
 * `error` as a KubeApiError whose message is one line: `what: 404 NotFound: <the server's
 * message>`, or `what: <why nothing answered>`. The original stays as `cause`.
 */
export function kubeApiError(what: string, error: unknown): KubeApiError {
  // Named again: said from the original failure.
  if (error instanceof KubeApiError)
    return error.cause === undefined ? error : kubeApiError(what, error.cause);
  const status = statusOf(error);
  if (status !== undefined) {
    const body = statusBody(error);
    // Without a Status body, ApiException says the generated client's word for the status
    // (`HTTP-Code: 401\nMessage: Unauthorized\nBody: ...`).
    const text = String((error as Error).message ?? '');
    const word = /^Message: (.*)$/m.exec(text)?.[1];
    const reason = typeof body.reason === 'string' && body.reason !== '' ? body.reason : (word ?? 'Unknown');
    const message =
      typeof body.message === 'string' && body.message !== '' ? body.message : (word ?? text.split('\n')[0]);
    return new KubeApiError(status, reason, `${what}: ${status} ${reason}: ${message}`, { cause: error });
  }
  if (isTimeout(error))
    return new KubeApiError(0, 'Timeout', `${what}: the API server did not answer in time`, { cause: error });
  // undici's `fetch failed` says why in its cause (ECONNREFUSED, a certificate error, ...).
  const cause = (error as { cause?: unknown } | null)?.cause;
  const why = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
  return new KubeApiError(0, 'Unreachable', `${what}: ${why}`, { cause: error });
}
