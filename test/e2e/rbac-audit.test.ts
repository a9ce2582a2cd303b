/**
 * The audit-log comparison that decides whether the chart's RBAC is minimal and sufficient: it
 * must flag a granted rule nobody used, a refused request, and a wildcard.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Manifest } from "./helm.ts";
import {
  auditPolicy,
  grantsOf,
  keyOf,
  parseAuditLog,
  refusedRequests,
  ungrantedUses,
  unusedGrants,
  usedPermissions,
  type AuditEvent,
} from "./rbac-audit.ts";

const SA = "system:serviceaccount:kp-system:kp";

function event(verb: string, ref: AuditEvent["objectRef"], code = 200, username = SA): AuditEvent {
  return {
    stage: "ResponseComplete",
    verb,
    requestURI: `/x/${ref?.resource ?? "nonresource"}`,
    user: { username },
    objectRef: ref,
    responseStatus: { code },
  };
}

const role: Manifest = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: { name: "manager" },
  rules: [
    { apiGroups: ["compute.cloud.com"], resources: ["s3buckets"], verbs: ["list", "watch", "patch"] },
    { apiGroups: ["compute.cloud.com"], resources: ["s3buckets/status"], verbs: ["patch"] },
    { apiGroups: [""], resources: ["events"], verbs: ["create"] },
    { nonResourceURLs: ["/metrics"], verbs: ["get"] },
  ],
};

describe("RBAC evidence from the audit log", () => {
  it("keys requests by group, resource with subresource, and verb; ignores non-resource URLs", () => {
    assert.equal(
      keyOf(event("patch", { apiGroup: "compute.cloud.com", resource: "s3buckets", subresource: "status" })),
      "compute.cloud.com|s3buckets/status|patch",
    );
    assert.equal(keyOf(event("create", { resource: "events" })), "|events|create");
    assert.equal(keyOf(event("get", undefined)), undefined);
  });

  it("counts only the operator's own requests as use", () => {
    const used = usedPermissions(
      [
        event("list", { apiGroup: "compute.cloud.com", resource: "s3buckets" }),
        event("patch", { apiGroup: "compute.cloud.com", resource: "s3buckets" }, 200, "admin"),
      ],
      SA,
    );
    assert.deepEqual([...used], ["compute.cloud.com|s3buckets|list"]);
  });

  it("flags every granted permission that was never used", () => {
    const used = usedPermissions(
      [
        event("list", { apiGroup: "compute.cloud.com", resource: "s3buckets" }),
        event("watch", { apiGroup: "compute.cloud.com", resource: "s3buckets" }),
        event("patch", { apiGroup: "compute.cloud.com", resource: "s3buckets", subresource: "status" }),
      ],
      SA,
    );
    assert.deepEqual(unusedGrants(grantsOf([role]), used), [
      "ClusterRole/manager: compute.cloud.com|s3buckets|patch",
      "ClusterRole/manager: |events|create",
    ]);
  });

  it("reports nothing when every grant was used", () => {
    const used = new Set(grantsOf([role]).map((g) => g.key));
    assert.deepEqual(unusedGrants(grantsOf([role]), used), []);
    assert.deepEqual(ungrantedUses(grantsOf([role]), used), []);
  });

  it("flags refused requests and uses no rule grants", () => {
    const events = [
      event("update", { apiGroup: "coordination.k8s.io", resource: "leases", namespace: "kp-system" }, 403),
    ];
    assert.deepEqual(refusedRequests(events, SA), ["update /x/leases"]);
    assert.deepEqual(ungrantedUses(grantsOf([role]), usedPermissions(events, SA)), [
      "coordination.k8s.io|leases|update",
    ]);
  });

  it("refuses wildcard rules", () => {
    const wild: Manifest = { ...role, rules: [{ apiGroups: ["*"], resources: ["pods"], verbs: ["get"] }] };
    assert.throws(() => grantsOf([wild]), /wildcard/);
  });

  it("parses JSON-lines logs and writes a policy scoped to the given users", () => {
    const line = JSON.stringify(event("get", { apiGroup: "coordination.k8s.io", resource: "leases" }));
    assert.equal(parseAuditLog(`${line}\n\n${line}\n`).length, 2);
    const policy = JSON.parse(auditPolicy([SA])) as { rules: { level: string; users?: string[] }[] };
    assert.deepEqual(policy.rules, [{ level: "Metadata", users: [SA] }, { level: "None" }]);
  });
});
