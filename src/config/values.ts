/**
 * Value parsers for command-line flags and their environment equivalents. Each returns the
 * parsed value or throws {@link ValueError} whose message states the accepted values; the
 * caller adds which flag (and which variable) carried the text.
 */
import { isIP } from "node:net";
import { MAX_USER_TAGS, tagKeyProblem, tagValueProblem } from "../api/v1/common.ts";
import { DurationSyntaxError, parseDuration } from "./duration.ts";

/** A value that a parser refused; `accepted` describes what would have been accepted. */
export class ValueError extends Error {
  readonly accepted: string;
  constructor(accepted: string) {
    super(`expected ${accepted}`);
    this.name = "ValueError";
    this.accepted = accepted;
  }
}

/** Where a server listens. `host` undefined means every interface. */
export interface BindAddress {
  readonly host: string | undefined;
  readonly port: number;
}

/** Go's `strconv.ParseBool` spellings. */
export function parseBool(text: string): boolean {
  if (["1", "t", "T", "true", "TRUE", "True"].includes(text)) return true;
  if (["0", "f", "F", "false", "FALSE", "False"].includes(text)) return false;
  throw new ValueError("true or false");
}

/**
 * A percentage from `min` to 100, with or without its `%` sign (`50%`, `12.5`), as a fraction
 * (0.5, 0.125).
 */
export function parsePercentage(text: string, min: number): number {
  const accepted = `a percentage from ${min}% to 100%, like 50%`;
  const m = /^\s*(\d+(?:\.\d+)?)\s*%?\s*$/.exec(text);
  if (m === null) throw new ValueError(accepted);
  const n = Number(m[1]);
  if (!(n >= min && n <= 100)) throw new ValueError(accepted);
  return n / 100;
}

/** A whole number within `[min, max]`. */
export function parseInteger(text: string, min: number, max: number): number {
  const accepted = `an integer from ${min} to ${max}`;
  if (!/^[+-]?\d+$/.test(text.trim())) throw new ValueError(accepted);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new ValueError(accepted);
  return n;
}

/** A Go duration of at least `minMs` milliseconds, in milliseconds. */
export function parsePositiveDuration(text: string, minMs: number): number {
  const accepted = `a duration of at least ${minMs >= 1000 ? `${minMs / 1000}s` : `${minMs}ms`} like 30s, 5m or 10h`;
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    if (err instanceof DurationSyntaxError) throw new ValueError(accepted);
    throw err;
  }
  if (ms < minMs) throw new ValueError(accepted);
  return ms;
}

/**
 * A listen address as Go's `net.Listen` takes it: ":8080", "127.0.0.1:8080", "[::1]:8080",
 * "localhost:8080"; the single text "0" disables the server and yields `null`.
 */
export function parseBindAddress(text: string): BindAddress | null {
  const accepted = 'host:port (":8080", "127.0.0.1:8080", "[::1]:8080") or "0" to disable';
  if (text === "0") return null;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  if (m === null) throw new ValueError(accepted);
  const [, v6, name, portText = ""] = m;
  const port = Number(portText);
  if (port > 65_535) throw new ValueError(accepted);
  if (v6 !== undefined) {
    if (isIP(v6) !== 6) throw new ValueError(accepted);
    return { host: v6, port };
  }
  if (name === undefined || name === "") return { host: undefined, port };
  if (isIP(name) === 0 && !isDnsSubdomain(name)) throw new ValueError(accepted);
  return { host: name, port };
}

/** One of `choices`, case-sensitive. */
export function parseChoice<T extends string>(text: string, choices: readonly T[]): T {
  const found = choices.find((c) => c === text);
  if (found === undefined) throw new ValueError(`one of ${choices.join(", ")}`);
  return found;
}

/** A Kubernetes namespace name (RFC 1123 label). */
export function parseNamespace(text: string): string {
  if (!isDnsLabel(text)) throw new ValueError("a namespace name (lowercase letters, digits and '-', at most 63)");
  return text;
}

/** A comma-separated list of namespace names; empty text is the empty list. */
export function parseNamespaceList(text: string): readonly string[] {
  const items = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const ns of items) {
    if (!isDnsLabel(ns)) throw new ValueError("a comma-separated list of namespace names");
  }
  return [...new Set(items)];
}

/** A Kubernetes object name (RFC 1123 subdomain), e.g. a Lease name. */
export function parseObjectName(text: string): string {
  if (!isDnsSubdomain(text)) throw new ValueError("an object name (lowercase letters, digits, '-' and '.', at most 253)");
  return text;
}

/** An AWS region name such as us-east-1 or eu-central-2. */
export function parseRegion(text: string): string {
  if (!/^[a-z]{2}(?:-[a-z]+)+-\d+$/.test(text)) throw new ValueError("an AWS region such as us-east-1");
  return text;
}

/**
 * Tags as comma-separated `key=value` pairs (`team=platform,cost-center=42`), each key and value
 * under the rules spec.tags has at admission; a value may contain `=`, not `,`. At most
 * {@link MAX_USER_TAGS}. Empty text is no tags.
 */
export function parseTagList(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of text.split(",")) {
    if (item.trim() === "") continue;
    const eq = item.indexOf("=");
    if (eq < 0) throw new ValueError(`comma-separated key=value tags; ${JSON.stringify(item)} has no '='`);
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    const problem = tagKeyProblem(key) ?? tagValueProblem(value);
    if (problem !== undefined) throw new ValueError(`comma-separated key=value tags (${JSON.stringify(key)}: ${problem})`);
    if (key in out) throw new ValueError(`comma-separated key=value tags, each key once (${JSON.stringify(key)} repeats)`);
    out[key] = value;
  }
  if (Object.keys(out).length > MAX_USER_TAGS) throw new ValueError(`at most ${MAX_USER_TAGS} tags`);
  return out;
}

/** Comma-separated tag key prefixes, each 1-128 characters; empty text is none. */
export function parseTagPrefixList(text: string): readonly string[] {
  const items = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const p of items) {
    if (p.length > 128) throw new ValueError("comma-separated tag key prefixes of at most 128 characters");
  }
  return [...new Set(items)];
}

/** Any non-empty text. */
export function parseNonEmpty(text: string): string {
  if (text.trim() === "") throw new ValueError("a non-empty value");
  return text;
}

function isDnsLabel(s: string): boolean {
  return s.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(s);
}

function isDnsSubdomain(s: string): boolean {
  return s.length <= 253 && s.split(".").every((part) => isDnsLabel(part));
}
