/**
 * The one thing the manager, the Event recorder and the metrics authorizer need from a
 * Kubernetes client: send a request, get the decoded JSON body or an `ApiError`
 * (src/runtime/kube/errors.ts) carrying the HTTP status. The REST client of src/runtime/kube
 * satisfies it structurally; unit tests pass an in-memory fake.
 */

/** One API request. `path` is absolute (`/apis/coordination.k8s.io/v1/...`). */
export interface KubeRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Defaults to JSON; PATCH callers name the patch type. */
  contentType?: string;
  signal?: AbortSignal;
}

/**
 * Sends {@link KubeRequest}s. Implementations must reject with an error whose numeric `status`
 * is the HTTP status when the server answered non-2xx, and must honour `signal`.
 */
export interface KubeRequester {
  request<T>(req: KubeRequest): Promise<T>;
}

/** The HTTP status carried by an API error, if any. Works for any error with a numeric `status`. */
export function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const status = (err as { status?: unknown }).status;
  return typeof status === "number" ? status : undefined;
}

/** The `reason` (`AlreadyExists`, `Conflict`, ...) carried by an API error, if any. */
export function apiReasonOf(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const reason = (err as { reason?: unknown }).reason;
  return typeof reason === "string" ? reason : undefined;
}
