/**
 * Errors of the Kubernetes REST client, one class per failed step:
 *
 * - {@link ApiError}: the API server answered with a non-2xx status (its `metav1.Status` parsed).
 * - {@link TransportError}: no usable answer: connection refused or reset, TLS failure, timeout,
 *   a body that is not JSON.
 *
 * Classify with the `is*` helpers rather than by message; they accept `unknown` so a `catch`
 * clause can use them directly.
 */

import { redactText, redactValue } from "./redact.ts";

/** The `metav1.Status` object the API server returns on failures and in watch ERROR events. */
export interface Status {
  apiVersion?: string;
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: { type?: string; message?: string; field?: string }[];
    retryAfterSeconds?: number;
  };
}

/** Options of the {@link ApiError} constructor. */
export interface ApiErrorInit {
  status: number;
  /** `Status.reason`, e.g. `NotFound`; empty when the body was not a Status. */
  reason?: string;
  message?: string;
  /** Parsed JSON body when it was JSON, else the raw text. */
  body?: unknown;
  method?: string;
  path?: string;
  /** Seconds from a `Retry-After` header or `Status.details.retryAfterSeconds`. */
  retryAfterSeconds?: number;
}

/**
 * The API server rejected a request. `status` is the HTTP status (or `Status.code` for a watch
 * ERROR event), `reason` the machine-readable `Status.reason` (`NotFound`, `Conflict`, `Expired`,
 * ...), `body` the decoded response body.
 */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number;
  readonly reason: string;
  /**
   * The parsed response body (or its text when it is not JSON). Not enumerable, so a logger
   * serialising the error leaves it out: a body that is not a Status (a proxy's page, an echo)
   * can hold anything.
   */
  declare readonly body: unknown;
  readonly method: string | undefined;
  readonly path: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(init: ApiErrorInit) {
    const where = init.method && init.path ? `${init.method} ${init.path}: ` : "";
    super(`${where}${init.message || `HTTP ${init.status}${init.reason ? ` ${init.reason}` : ""}`}`);
    this.status = init.status;
    this.reason = init.reason ?? "";
    Object.defineProperty(this, "body", { value: init.body, enumerable: false });
    this.method = init.method;
    this.path = init.path;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }

  /** The body as a `metav1.Status`, when it is one. */
  get statusObject(): Status | undefined {
    return isStatus(this.body) ? this.body : undefined;
  }

  /**
   * Builds the error for a response: parses `text` as JSON and, when it is a `metav1.Status`,
   * takes `reason`, `message` and `retryAfterSeconds` from it. Never throws.
   */
  static fromResponse(opts: {
    status: number;
    text: string;
    method?: string;
    path?: string;
    retryAfterHeader?: string | undefined;
    /** The credentials the request sent: removed from the body, which may repeat them (./redact.ts). */
    secrets?: readonly string[];
  }): ApiError {
    const secrets = opts.secrets ?? [];
    let body: unknown = redactText(opts.text, secrets);
    try {
      body = opts.text.length > 0 ? redactValue(JSON.parse(opts.text) as unknown, secrets) : undefined;
    } catch {
      // Not JSON (a proxy's HTML page, a plain-text 503): keep the text.
    }
    const status = isStatus(body) ? body : undefined;
    const headerRetry = opts.retryAfterHeader !== undefined ? Number(opts.retryAfterHeader) : Number.NaN;
    const retryAfterSeconds = Number.isFinite(headerRetry) ? headerRetry : status?.details?.retryAfterSeconds;
    // A body that is not a Status is never quoted: it is not the API server's message and may
    // echo what was sent.
    return new ApiError({
      status: opts.status,
      reason: status?.reason ?? "",
      message: status?.message ?? "",
      body,
      method: opts.method,
      path: opts.path,
      retryAfterSeconds,
    });
  }

  /** The error a watch ERROR event stands for (its object is a `metav1.Status`). */
  static fromStatus(status: Status, where?: { method?: string; path?: string }): ApiError {
    return new ApiError({
      status: status.code ?? 500,
      reason: status.reason ?? "",
      message: status.message ?? "",
      body: status,
      ...where,
    });
  }
}

/** Why a {@link TransportError} happened. */
export type TransportFailure = "connect" | "timeout" | "reset" | "decode" | "other";

/**
 * A request got no usable answer: the connection failed or dropped, the request timed out, or the
 * body could not be decoded. Safe to retry for reads; for writes the server may or may not have
 * applied the change. The underlying error is in `cause`.
 */
export class TransportError extends Error {
  override readonly name = "TransportError";
  readonly failure: TransportFailure;
  readonly method: string;
  readonly path: string;

  constructor(opts: {
    failure: TransportFailure;
    method: string;
    path: string;
    message: string;
    cause?: unknown;
  }) {
    super(`${opts.method} ${opts.path}: ${opts.message}`, { cause: opts.cause });
    this.failure = opts.failure;
    this.method = opts.method;
    this.path = opts.path;
  }
}

/** Whether `v` looks like a `metav1.Status`. */
export function isStatus(v: unknown): v is Status {
  return typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "Status";
}

/**
 * The HTTP status carried by an API error, if any: an {@link ApiError}'s, or the numeric `status`
 * of any other error (a {@link KubeRequester} fake's).
 */
export function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const status = (err as { status?: unknown }).status;
  return typeof status === "number" ? status : undefined;
}

function hasStatus(e: unknown, status: number): boolean {
  return e instanceof ApiError && e.status === status;
}

/** 404: the object or the resource type does not exist. */
export function isNotFound(e: unknown): boolean {
  return hasStatus(e, 404);
}

/** 409 with a reason other than `AlreadyExists`: an optimistic-concurrency conflict. */
export function isConflict(e: unknown): boolean {
  return e instanceof ApiError && e.status === 409 && e.reason !== "AlreadyExists";
}

/** 409 `AlreadyExists`: a create found an object of that name. */
export function isAlreadyExists(e: unknown): boolean {
  return e instanceof ApiError && e.status === 409 && e.reason === "AlreadyExists";
}

/**
 * 410 Gone / `Expired`: a resourceVersion or continue token is older than the server keeps.
 * A list or watch must restart from a fresh list.
 */
export function isGone(e: unknown): boolean {
  return e instanceof ApiError && (e.status === 410 || e.reason === "Expired" || e.reason === "Gone");
}

/** 403: RBAC denies the request. */
export function isForbidden(e: unknown): boolean {
  return hasStatus(e, 403);
}

/** 401: the credentials were rejected (expired token, wrong certificate). */
export function isUnauthorized(e: unknown): boolean {
  return hasStatus(e, 401);
}

/** 422 `Invalid`: the object failed validation; retrying the same object cannot succeed. */
export function isInvalid(e: unknown): boolean {
  return e instanceof ApiError && (e.status === 422 || e.reason === "Invalid");
}

/** 429: the server (API priority and fairness) asks the client to slow down. */
export function isTooManyRequests(e: unknown): boolean {
  return hasStatus(e, 429);
}

/**
 * Whether retrying the same request later may succeed: a {@link TransportError}, 429, 500, 502,
 * 503, 504, or a 410 (after a relist). Validation, authorization and not-found errors are not.
 */
export function isRetryable(e: unknown): boolean {
  if (e instanceof TransportError) return true;
  if (!(e instanceof ApiError)) return false;
  return e.status === 429 || e.status === 410 || (e.status >= 500 && e.status !== 501);
}
