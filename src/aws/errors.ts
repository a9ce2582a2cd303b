/**
 * The one place that decides what an AWS failure means. Every error thrown by a client from
 * {@link AwsClients} is already an {@link AwsError}; {@link classifyAwsError} also accepts raw
 * SDK and Node errors, so code holding an error from anywhere gets the same answer.
 */

import {
  ACCESS_CODES,
  CODE_HINTS,
  CODE_PATTERNS,
  KNOWN_CODES,
  type AwsAccess,
  type AwsErrorKind,
} from "./error-codes.ts";
import { VALUE_ECHO } from "./sdk-logger.ts";
import { SERVICE_DISPLAY_NAME, type AwsService } from "./service.ts";

/** What the caller should do about a failure (declared with the code tables that assign it). */
export type { AwsErrorKind } from "./error-codes.ts";

export type { AwsAccess } from "./error-codes.ts";

/** A classified failure. Every field is stable across repeats of the same failure. */
export interface AwsErrorInfo {
  readonly kind: AwsErrorKind;
  /**
   * The AWS error code as the SDK names it (`InvalidAMIID.NotFound`, `NoSuchBucket`,
   * `QueueDoesNotExist`), or the transport code (`ECONNREFUSED`, `TimeoutError`), or
   * `CredentialsProviderError`, or `HTTP<status>` when the response carried no code.
   */
  readonly code: string;
  /** The service called, or `unknown` when the error came without that context. */
  readonly service: AwsService | "unknown";
  /** The API operation (`RunInstances`), or `unknown`. */
  readonly operation: string;
  /**
   * A message without request IDs, host IDs, timestamps, encoded authorization blobs or access
   * key IDs, at most {@link MAX_MESSAGE_LENGTH} characters, fit for a status condition: the same
   * failure always yields the same text.
   */
  readonly message: string;
  /** The HTTP status of the response, when there was one. */
  readonly httpStatus?: number;
  /**
   * Set on a terminal failure of the caller's access rather than of the request: its identity
   * may not make the call (`denied`), may not use what the call needs on its behalf, such as a
   * KMS key (`prerequisite`), or has no credentials AWS accepts (`credentials`). The request as
   * sent cannot succeed, but the same request succeeds once IAM or the credentials are fixed,
   * without any change to the object.
   */
  readonly access?: AwsAccess;
}

/** Where a failure happened; fills the matching fields of {@link AwsErrorInfo}. */
export interface AwsCallContext {
  service?: AwsService;
  operation?: string;
}

/** Upper bound on {@link AwsErrorInfo.message}. */
export const MAX_MESSAGE_LENGTH = 400;

/**
 * A classified AWS failure with the original error as `cause`. The clients built by
 * {@link AwsClients} throw only this type, so `err instanceof AwsError` holds for every failed
 * call; the original SDK exception (for `instanceof NoSuchBucket` checks) is `err.cause`.
 */
export class AwsError extends Error {
  override readonly name = "AwsError";
  readonly info: AwsErrorInfo;

  constructor(info: AwsErrorInfo, options?: { cause?: unknown }) {
    super(info.message, options);
    this.info = info;
  }

  /** Shorthand for `info.kind`. */
  get kind(): AwsErrorKind {
    return this.info.kind;
  }

  /** Shorthand for `info.code`. */
  get code(): string {
    return this.info.code;
  }

  /** Wraps any thrown value; an {@link AwsError} is returned unchanged. */
  static from(err: unknown, context?: AwsCallContext): AwsError {
    if (err instanceof AwsError) return err;
    return new AwsError(classifyAwsError(err, context), { cause: err });
  }
}

/**
 * A call that was not sent: a client-side rate budget would have held it longer than the client
 * lets a call wait, so it booked a later slot instead (rate-budget.ts): send it again after
 * `retryAfterMs`. Nothing reached AWS; a reconcile gives its worker back and is requeued for
 * then (the shared flow maps this error to `requeueAfter`).
 */
export class NoPermitYetError extends AwsError {
  /** Milliseconds until the booked slot. */
  readonly retryAfterMs: number;

  constructor(service: AwsService, operation: string, budget: string, retryAfterMs: number) {
    super({
      kind: "throttled",
      code: NO_PERMIT_YET_CODE,
      service,
      operation,
      message: `${operation} waits for a permit of the client-side ${budget} rate budget`,
    });
    this.retryAfterMs = retryAfterMs;
  }
}

/** The code of {@link NoPermitYetError}. */
export const NO_PERMIT_YET_CODE = "NoPermitYet";

/** Whether `err` classifies as one of `kinds`. Accepts any thrown value. */
export function isAwsErrorKind(err: unknown, ...kinds: AwsErrorKind[]): boolean {
  return kinds.includes(classifyAwsError(err).kind);
}

/** Fields the SDK and Node put on errors; read defensively, everything is optional. */
interface ErrorFields {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  Code?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  $response?: { statusCode?: unknown };
  $retryable?: { throttling?: unknown };
  errors?: unknown;
  cause?: unknown;
}

const GENERIC_NAMES = new Set(["Error", "UnknownError", "Unknown", "ServiceException"]);

function fieldsOf(err: unknown): ErrorFields {
  return typeof err === "object" && err !== null ? (err as ErrorFields) : {};
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.length > 0 ? v : undefined;
}

function httpStatusOf(f: ErrorFields): number | undefined {
  const s = f.$metadata?.httpStatusCode ?? f.$response?.statusCode;
  return typeof s === "number" && s > 0 ? s : undefined;
}

/**
 * Whether AWS answered. The SDK's retry middleware also puts `$metadata` (attempts, retry delay)
 * on transport errors, so only a fault marker or an HTTP status counts.
 */
function isServiceError(f: ErrorFields, status: number | undefined): boolean {
  return status !== undefined || f.$fault === "client" || f.$fault === "server";
}

/** Node reports a refused dual-stack connect as an AggregateError; its parts carry the code. */
function firstInnerCode(f: ErrorFields): string | undefined {
  if (!Array.isArray(f.errors)) return undefined;
  for (const inner of f.errors as unknown[]) {
    const code = str(fieldsOf(inner).code);
    if (code !== undefined) return code;
  }
  return undefined;
}

function codeOf(f: ErrorFields, status: number | undefined): string {
  const name = str(f.name);
  if (isServiceError(f, status)) {
    if (name !== undefined && !GENERIC_NAMES.has(name) && !name.endsWith("ServiceException")) return name;
    const legacy = str(f.Code);
    if (legacy !== undefined) return legacy;
  }
  if (name === "TimeoutError" || name === "AbortError" || name === "CredentialsProviderError") return name;
  const code = str(f.code) ?? firstInnerCode(f);
  if (code !== undefined) return code;
  if (status !== undefined) return `HTTP${status}`;
  return name ?? "UnknownError";
}

function kindOf(code: string, f: ErrorFields, status: number | undefined): AwsErrorKind {
  if (status === 429 || f.$retryable?.throttling === true) return "throttled";
  const known = KNOWN_CODES.get(code);
  if (known !== undefined) return known;
  const legacy = str(f.Code);
  const knownLegacy = legacy !== undefined ? KNOWN_CODES.get(legacy) : undefined;
  if (knownLegacy !== undefined) return knownLegacy;
  for (const [pattern, kind] of CODE_PATTERNS) {
    if (pattern.test(code)) return kind;
  }
  if (f.$retryable !== undefined) return "retryable";
  if (status !== undefined && status >= 500) return "retryable";
  if (f.$fault === "server") return "retryable";
  if (status !== undefined && status >= 400) return "terminal";
  if (f.$fault === "client") return "terminal";
  // No response at all and no known code: a local failure (a bug, a socket error Node named
  // differently). Retrying with backoff is the safe default; it is never a reason to give up.
  return "retryable";
}

const SCRUBBERS: ReadonlyArray<readonly [RegExp, string]> = [
  // Validation errors quote what was sent (an external ID, a web identity token): never kept.
  [VALUE_ECHO, "Value at"],
  // IAM's encoded authorization failure detail differs on every call.
  [/\s*Encoded authorization failure message:.*$/is, ""],
  [/\b(?:request[ -]?id|requestid|host[ -]?id|x-amz-request-id|x-amz-id-2)\s*[:=]?\s*[\w+/=-]+/gi, ""],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, ""],
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g, "<time>"],
  [/\b\d{8}T\d{6}Z\b/g, "<time>"],
  // Assumed-role session names embed a timestamp (the SDK's web identity default does).
  [/(assumed-role\/[\w+=,.@-]+\/)[\w+=,.@-]+/g, "$1<session>"],
  [/\b(?:AKIA|ASIA|AROA|AIDA)[A-Z0-9]{12,}\b/g, "<access-key-id>"],
  // Base64 host IDs and tokens: long runs mixing upper case, lower case and digits (bucket
  // names are lower case, so they survive).
  [/(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*\d)[A-Za-z0-9+/]{40,}={0,2}/g, ""],
  // The SDK's own timeout texts carry the configured milliseconds and a log level.
  [/^@smithy\/[\w-]+ - (?:\[\w+\] )?/, ""],
  [/\s{2,}/g, " "],
  [/\s+([.,;:])/g, "$1"],
  [/[\s:;,(]+$/g, ""],
];

function cleanMessage(raw: string | undefined): string {
  if (raw === undefined || raw === "UnknownError") return "";
  let text = raw.slice(0, 4 * MAX_MESSAGE_LENGTH);
  for (const [re, replacement] of SCRUBBERS) text = text.replace(re, replacement);
  return text.trim();
}

function stableMessage(
  code: string,
  kind: AwsErrorKind,
  rawMessage: string | undefined,
  status: number | undefined,
  context: AwsCallContext,
): string {
  const hint = CODE_HINTS[code];
  let detail = cleanMessage(rawMessage);
  // Transport errors: the hint replaces the SDK text, which names configured timeouts.
  if (code === "TimeoutError" || code === "AbortError" || code === "CredentialsProviderError") detail = "";
  if (hint !== undefined) detail = detail.replace(/\.$/, "");
  const parts = [detail, hint].filter((p): p is string => p !== undefined && p.length > 0);
  if (parts.length === 0) parts.push(status !== undefined ? `HTTP ${status} (${kind})` : kind);
  const where =
    context.service !== undefined
      ? `${SERVICE_DISPLAY_NAME[context.service]} ${context.operation ?? "call"}`
      : (context.operation ?? "AWS call");
  const message = `${where} failed with ${code}: ${parts.join("; ")}`;
  return message.length > MAX_MESSAGE_LENGTH ? `${message.slice(0, MAX_MESSAGE_LENGTH - 3)}...` : message;
}

/**
 * Classifies any thrown value: an SDK service exception (modeled or not), a Node socket error,
 * the SDK's `TimeoutError`, a `CredentialsProviderError`, or an {@link AwsError} (whose info is
 * returned, completed with `context` where it lacked service or operation).
 *
 * Guarantees: never throws; the result depends only on the error's code, status, fault, message
 * (after scrubbing) and `context`, never on request IDs or time. Unknown 4xx codes are terminal,
 * unknown 5xx codes and failures without any response are retryable.
 */
export function classifyAwsError(err: unknown, context: AwsCallContext = {}): AwsErrorInfo {
  if (err instanceof AwsError) {
    if (err.info.service !== "unknown" || context.service === undefined) return err.info;
    const cause = err.cause;
    return cause === undefined ? { ...err.info, service: context.service } : classifyAwsError(cause, context);
  }
  const f = fieldsOf(err);
  const status = httpStatusOf(f);
  const code = codeOf(f, status);
  const kind = kindOf(code, f, status);
  const rawMessage = str(f.message) ?? (typeof err === "string" ? err : undefined);
  const legacy = str(f.Code);
  const access =
    kind === "terminal"
      ? (ACCESS_CODES.get(code) ?? (legacy !== undefined ? ACCESS_CODES.get(legacy) : undefined))
      : undefined;
  const info: AwsErrorInfo = {
    kind,
    code,
    service: context.service ?? "unknown",
    operation: context.operation ?? "unknown",
    message: stableMessage(code, kind, rawMessage, status, context),
    ...(status !== undefined ? { httpStatus: status } : {}),
    ...(access !== undefined ? { access } : {}),
  };
  return info;
}
