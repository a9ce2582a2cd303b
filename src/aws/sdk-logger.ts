/**
 * The AWS SDK's logger interface, backed by pino, with secrets removed before anything is
 * written. The SDK logs each call's input, output and errors; none of that should carry
 * credentials, but headers, signed URLs and error objects can, so every value is scrubbed.
 */

import type { Logger } from "../runtime/logging.ts";

/** The logger shape the SDK calls (`@smithy/types` Logger). */
export interface SdkLogger {
  trace(...content: unknown[]): void;
  debug(...content: unknown[]): void;
  info(...content: unknown[]): void;
  warn(...content: unknown[]): void;
  error(...content: unknown[]): void;
}

/**
 * The value an AWS validation error quotes (`Value 'abc' at 'externalId'`, `Value [a, b] at`):
 * whatever a caller sent, secrets included.
 */
export const VALUE_ECHO = /\bValue\s+(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\[[^\]]*\]|\S+)\s+at\b/g;

/** Replacement text for anything removed. */
export const REDACTED = "[redacted]";

/** Keys whose values are never logged, compared case-insensitively. */
const SECRET_KEYS = new Set(
  [
    "authorization",
    "proxy-authorization",
    "x-amz-security-token",
    "x-amz-credential",
    "x-amz-signature",
    "accesskeyid",
    "secretaccesskey",
    "sessiontoken",
    "credentials",
    "password",
    "token",
    "webidentitytoken",
    "externalid",
    "serialnumber",
    "tokencode",
    "userdata",
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
  ].map((k) => k.toLowerCase()),
);

const STRING_SCRUBBERS: ReadonlyArray<readonly [RegExp, string]> = [
  // AWS's validation errors quote the rejected value ("Value 'x' at 'externalId' failed to ...").
  [VALUE_ECHO, `Value ${REDACTED} at`],
  [/\b(?:AKIA|ASIA|AROA|AIDA)[A-Z0-9]{12,}\b/g, REDACTED],
  [/(Credential=)[^,\s&]+/gi, `$1${REDACTED}`],
  [/(Signature=)[0-9a-f]+/gi, `$1${REDACTED}`],
  [/(X-Amz-Security-Token=)[^&\s]+/gi, `$1${REDACTED}`],
  [/(X-Amz-Credential=)[^&\s]+/gi, `$1${REDACTED}`],
  [/(X-Amz-Signature=)[^&\s]+/gi, `$1${REDACTED}`],
  [
    /((?:aws_)?(?:secret_access_key|session_token|secretAccessKey|sessionToken)["']?\s*[:=]\s*["']?)[^"'\s,}]+/gi,
    `$1${REDACTED}`,
  ],
];

/** Scrubs access key IDs, signatures, security tokens and secret assignments from a string. */
export function redactString(text: string): string {
  let out = text;
  for (const [re, replacement] of STRING_SCRUBBERS) out = out.replace(re, replacement);
  return out;
}

const MAX_DEPTH = 6;

/**
 * A deep copy of `value` safe to log: secret-named keys replaced, strings scrubbed, errors
 * reduced to name, message, code and metadata (the raw HTTP response is dropped), cycles and
 * depth cut off. Never throws.
 */
export function redactSecrets(value: unknown, depth = 0, seen: WeakSet<object> = new WeakSet()): unknown {
  if (typeof value === "string") return redactString(value);
  if (value === null || typeof value !== "object") {
    return typeof value === "function" || typeof value === "symbol" ? undefined : value;
  }
  if (seen.has(value)) return "[circular]";
  if (depth >= MAX_DEPTH) return "[truncated]";
  seen.add(value);
  if (value instanceof Error) {
    const e = value as Error & { code?: unknown; $metadata?: unknown; $fault?: unknown };
    return {
      name: e.name,
      message: redactString(e.message),
      ...(e.code !== undefined ? { code: redactSecrets(e.code, depth + 1, seen) } : {}),
      ...(e.$fault !== undefined ? { fault: e.$fault } : {}),
      ...(e.$metadata !== undefined ? { metadata: redactSecrets(e.$metadata, depth + 1, seen) } : {}),
    };
  }
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1, seen));
  if (ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "$response" || k === "body") continue;
    out[k] = SECRET_KEYS.has(k.toLowerCase()) ? REDACTED : redactSecrets(v, depth + 1, seen);
  }
  return out;
}

function emit(logger: Logger, level: "trace" | "debug" | "warn" | "error", content: unknown[]): void {
  if (!logger.isLevelEnabled(level)) return;
  const [first, ...rest] = content.map((c) => redactSecrets(c));
  const fields =
    typeof first === "object" && first !== null && !Array.isArray(first) ? first : { detail: first };
  const msg = rest.filter((r) => typeof r === "string").join(" ");
  logger[level]({ sdk: fields, ...(rest.length > 0 && msg === "" ? { extra: rest } : {}) }, msg || "aws sdk");
}

/**
 * Adapts a pino logger for the SDK's `logger` option (and the HTTP handler's).
 *
 * Levels: the SDK logs every call's input and output at `info` and every failed call at
 * `error`; the operator classifies and reports failures itself, so both go to `debug` here.
 * `warn` stays `warn`. Everything passes through {@link redactSecrets} first.
 */
export function sdkLogger(logger: Logger): SdkLogger {
  const child = logger.child({ component: "aws-sdk" });
  return {
    trace: (...c) => emit(child, "trace", c),
    debug: (...c) => emit(child, "debug", c),
    info: (...c) => emit(child, "debug", c),
    warn: (...c) => emit(child, "warn", c),
    error: (...c) => emit(child, "debug", c),
  };
}
