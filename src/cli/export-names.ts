/**
 * The Kubernetes object names an export gives AWS resources: derived from the AWS name
 * predictably, valid for every kind (an RFC 1123 label: lowercase letters, digits and `-`, at most
 * 63 characters, starting and ending with a letter or digit), and never colliding. A name that
 * is already such a label, and is no other resource's, is kept as it is; every other gets a suffix
 * of 8 hex digits of the SHA-256 of the AWS name, so the same estate always gives the same names.
 */
import { createHash } from "node:crypto";

/** The longest object name: an RFC 1123 label, which every kind's name satisfies. */
const MAX_NAME = 63;

/** Whether `name` is an RFC 1123 label. */
function isLabel(name: string): boolean {
  return name.length <= MAX_NAME && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name);
}

/** The lowercase, dash-separated form of `awsName`, cut to leave room for a suffix. */
function base(awsName: string): string {
  const cleaned = awsName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return (cleaned === "" ? "resource" : cleaned).slice(0, MAX_NAME - 9).replace(/-+$/, "");
}

/** `key`'s hashed form: the base of `awsName` and 8 hex digits of the SHA-256 of `key`. */
function hashed(awsName: string, key: string): string {
  return `${base(awsName)}-${createHash("sha256").update(key).digest("hex").slice(0, 8)}`;
}

/**
 * The object name of each resource of one kind, by its ID; see the module comment. An AWS name
 * that several resources share (two instances with one `Name` tag) is hashed with each one's ID.
 * The result does not depend on the order of `resources`.
 */
export function objectNames(
  resources: readonly { readonly id: string; readonly awsName: string }[],
): Map<string, string> {
  const sorted = [...resources].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const shared = new Map<string, number>();
  for (const r of sorted) shared.set(r.awsName, (shared.get(r.awsName) ?? 0) + 1);
  const out = new Map<string, string>();
  const taken = new Set<string>();
  // Names kept as they are come first: a hashed name never takes one away.
  for (const r of sorted) {
    if (isLabel(r.awsName) && shared.get(r.awsName) === 1) {
      out.set(r.id, r.awsName);
      taken.add(r.awsName);
    }
  }
  for (const r of sorted) {
    if (out.has(r.id)) continue;
    const key = shared.get(r.awsName) === 1 ? r.awsName : `${r.awsName}@${r.id}`;
    let name = hashed(r.awsName, key);
    for (let i = 2; taken.has(name); i++) name = hashed(r.awsName, `${key}#${i}`);
    out.set(r.id, name);
    taken.add(name);
  }
  return out;
}
