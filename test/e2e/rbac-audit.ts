/**
 * RBAC minimality and sufficiency judged from evidence: the kube-apiserver audit log of a run of
 * the operator, compared with the rules the chart grants.
 *
 * A permission is a (API group, resource[/subresource], verb) triple. The operator *used* a
 * permission when the audit log holds a request by its ServiceAccount with that triple; a rule
 * is *unused* when none of its triples was used. A grant with no use fails the minimality test,
 * a refused request (403) fails the sufficiency test.
 */
import { readFileSync } from "node:fs";
import type { Manifest } from "./helm.ts";

/** The fields of an audit.k8s.io/v1 Event this module reads. */
export interface AuditEvent {
  readonly stage: string;
  readonly verb: string;
  readonly requestURI: string;
  readonly user: { readonly username: string };
  readonly objectRef?: {
    readonly apiGroup?: string;
    readonly resource?: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
  };
  readonly responseStatus?: { readonly code?: number };
}

/** An audit policy logging request metadata for `usernames` only. */
export function auditPolicy(usernames: readonly string[]): string {
  return JSON.stringify({
    apiVersion: "audit.k8s.io/v1",
    kind: "Policy",
    omitStages: ["RequestReceived"],
    rules: [{ level: "Metadata", users: usernames }, { level: "None" }],
  });
}

/** Parses a JSON-lines audit log (the kube-apiserver `--audit-log-path` format). */
export function parseAuditLog(text: string): AuditEvent[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as AuditEvent);
}

/** Reads and parses an audit log file; a missing file is an empty log. */
export function readAuditLog(file: string): AuditEvent[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return parseAuditLog(text);
}

/** `group|resource[/subresource]|verb`, the key used throughout this module. */
export function permissionKey(group: string, resource: string, verb: string): string {
  return `${group}|${resource}|${verb}`;
}

/** Permission key of a resource request; `undefined` for non-resource URLs (/api, /version). */
export function keyOf(e: AuditEvent): string | undefined {
  const ref = e.objectRef;
  if (ref?.resource === undefined) return undefined;
  const resource = ref.subresource ? `${ref.resource}/${ref.subresource}` : ref.resource;
  return permissionKey(ref.apiGroup ?? "", resource, e.verb);
}

/** Every permission `username` exercised, whatever the response. */
export function usedPermissions(events: readonly AuditEvent[], username: string): Set<string> {
  const used = new Set<string>();
  for (const e of events) {
    if (e.user.username !== username) continue;
    const k = keyOf(e);
    if (k !== undefined) used.add(k);
  }
  return used;
}

/** Requests of `username` that RBAC refused (403), as `verb requestURI`. */
export function refusedRequests(events: readonly AuditEvent[], username: string): string[] {
  return events
    .filter((e) => e.user.username === username && e.responseStatus?.code === 403)
    .map((e) => `${e.verb} ${e.requestURI}`);
}

type Rule = { apiGroups?: string[]; resources?: string[]; verbs?: string[]; nonResourceURLs?: string[] };

/** One granted permission and the role that grants it. */
export interface Grant {
  readonly key: string;
  readonly role: string;
}

/**
 * The resource permissions granted by Roles and ClusterRoles, one per (group, resource, verb).
 * Wildcards are refused: a minimal role names what it grants.
 * @throws Error on a `*` group, resource or verb.
 */
export function grantsOf(roles: readonly Manifest[]): Grant[] {
  const out: Grant[] = [];
  for (const role of roles) {
    const name = `${role.kind}/${role.metadata.name}`;
    for (const r of (role.rules as Rule[] | undefined) ?? []) {
      if (r.nonResourceURLs !== undefined) continue;
      for (const g of r.apiGroups ?? [])
        for (const res of r.resources ?? [])
          for (const v of r.verbs ?? []) {
            if (g === "*" || res === "*" || v === "*")
              throw new Error(`${name} grants a wildcard (${g}|${res}|${v})`);
            out.push({ key: permissionKey(g, res, v), role: name });
          }
    }
  }
  return out;
}

/** Granted permissions the evidence never exercised, as `role: group|resource|verb`. */
export function unusedGrants(grants: readonly Grant[], used: ReadonlySet<string>): string[] {
  return grants.filter((g) => !used.has(g.key)).map((g) => `${g.role}: ${g.key}`);
}

/** Used permissions no grant covers, as `group|resource|verb`. */
export function ungrantedUses(grants: readonly Grant[], used: ReadonlySet<string>): string[] {
  const granted = new Set(grants.map((g) => g.key));
  return [...used].filter((k) => !granted.has(k)).sort();
}
