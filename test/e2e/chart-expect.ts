/**
 * What the offline chart tests share: the rendered manager container, and the RBAC the chart must
 * grant (derived from the kind registry), as (group, resource, verb) triples.
 */
import { awsAccountModule } from "../../src/accounts/index.ts";
import assert from "node:assert/strict";
import { KINDS as REGISTRY } from "../../src/kinds.ts";
import {
  METRICS_AUTH_RULES as GENERATED_METRICS_AUTH_RULES,
  managerRules,
  mergeRules,
  OPERATOR_RULES,
} from "../../src/gen/rbac.ts";
import type { KubeRule } from "../../src/reconcilers/common/kind.ts";
import { at, find, type Manifest } from "./helm.ts";

type Rule = { apiGroups?: string[]; resources?: string[]; verbs: string[]; nonResourceURLs?: string[] };
/** The manager container of a rendered Deployment. */
export type Container = {
  name: string;
  args: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  [k: string]: unknown;
};

/** Full name of release `kp`. */
export const FULL = "kp-kubeprovisioner";

/** The manager container of the one Deployment. */
export function container(m: readonly Manifest[]): Container {
  const c = at(find(m, "Deployment"), "spec", "template", "spec", "containers", 0) as Container | undefined;
  assert.ok(c, "the Deployment has a container");
  return c;
}

/** The manager container's variable `name`. */
export function envOf(
  m: readonly Manifest[],
  name: string,
): { name: string; value?: string; valueFrom?: unknown } | undefined {
  return (container(m).env ?? []).find((e) => e.name === name);
}

/** (group, resource, verb) triples of a role, sorted, for exact comparison. */
export function triples(role: Manifest): string[] {
  const out: string[] = [];
  for (const r of (role.rules as Rule[] | undefined) ?? []) {
    for (const g of r.apiGroups ?? ["<none>"])
      for (const res of r.resources ?? r.nonResourceURLs ?? [])
        for (const v of r.verbs) out.push(`${g}|${res}|${v}`);
  }
  return out.sort();
}

/** `group|resource|verb` for every resource and verb. */
export function expand(group: string, resources: string[], verbs: string[]): string[] {
  return resources.flatMap((r) => verbs.map((v) => `${group}|${r}|${v}`));
}

/** Plurals of the managed kinds, from the kind registry. */
export const KINDS: readonly string[] = REGISTRY.map((k) => k.resource.plural);
/** Plurals of every CRD the chart installs: the managed kinds and AwsAccount. */
export const CRDS: readonly string[] = [...KINDS, awsAccountModule.resource.plural];

/** `group|resource|verb` triples of `rules`. */
function triplesOf(rules: readonly KubeRule[]): string[] {
  return rules.flatMap((r) => r.apiGroups.flatMap((g) => expand(g, [...r.resources], [...r.verbs])));
}

/** What the manager ClusterRole grants besides the metrics-auth rules: the registry's rules. */
export const MANAGER_RULES = triplesOf(managerRules(REGISTRY, awsAccountModule.kubernetes));
/** What a namespaced install grants in each watched namespace: the kinds' rules and Events. */
export const NAMESPACED_RULES = triplesOf(managerRules(REGISTRY));
/** What a namespaced install keeps in the ClusterRole besides metrics auth: the cluster-scoped rules. */
export const CLUSTER_RULES = triplesOf(mergeRules(awsAccountModule.kubernetes));
/** Events alone: the Roles of a namespaced install in the release namespace and `default`. */
export const EVENT_RULES = triplesOf(OPERATOR_RULES);
/** TokenReview and SubjectAccessReview, granted only with metrics.secure. */
export const METRICS_AUTH_RULES = triplesOf(GENERATED_METRICS_AUTH_RULES);
/** What the <fullname>-view ClusterRole grants: reading the kinds and their status. */
export const VIEW_RULES = [
  ...expand("compute.cloud.com", [...KINDS], ["get", "list", "watch"]),
  ...expand(
    "compute.cloud.com",
    KINDS.map((k) => `${k}/status`),
    ["get"],
  ),
];
/** What the <fullname>-edit ClusterRole grants: managing the kinds, reading (never writing) status. */
export const EDIT_RULES = [
  ...expand(
    "compute.cloud.com",
    [...KINDS],
    ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
  ),
  ...expand(
    "compute.cloud.com",
    KINDS.map((k) => `${k}/status`),
    ["get"],
  ),
];
/** The label that aggregates a ClusterRole into the built-in `role` ClusterRole. */
export const aggregateTo = (role: "view" | "edit" | "admin"): string =>
  `rbac.authorization.k8s.io/aggregate-to-${role}`;
