/**
 * Namespace confinement of an AwsAccount: which namespaces `spec.allowedNamespaces` allows. Pure.
 */
import type { AllowedNamespaces, LabelSelector } from "../api/v1/aws-account.ts";

/** A namespace as confinement sees it. */
export interface NamespaceFacts {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * Whether `allowed` admits `ns`: it is listed in `names`, or its labels match `selector`. Nothing
 * set (the default `{}`) admits no namespace; an empty selector (`selector: {}`) admits every one.
 */
export function namespaceAllowed(allowed: AllowedNamespaces | undefined, ns: NamespaceFacts): boolean {
  if (allowed === undefined) return false;
  if (allowed.names?.includes(ns.name) === true) return true;
  return allowed.selector !== undefined && selectorMatches(allowed.selector, ns.labels);
}

/** Whether `labels` meet every requirement of `selector` (Kubernetes label selector semantics). */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, req.key);
    const value = labels[req.key];
    const values = req.values ?? [];
    switch (req.operator) {
      case "In":
        if (!has || value === undefined || !values.includes(value)) return false;
        break;
      case "NotIn":
        if (has && value !== undefined && values.includes(value)) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
    }
  }
  return true;
}
