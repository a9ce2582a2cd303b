/**
 * The Kubernetes permissions of the managed kinds, as the rules of a (Cluster)Role: the rule type
 * and the rules the shared flow needs on every kind's objects. The chart's ClusterRole and
 * config/rbac are generated from them (src/gen/rbac.ts).
 */
import type { ResourceType } from "../../runtime/kube/object.ts";

/** One rule of a Kubernetes (Cluster)Role. */
export interface KubeRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  /** Why the operator needs the rule, for the comment above it in the generated ClusterRole. */
  readonly why?: string;
}

/**
 * What the shared flow calls on the objects of a kind: list and watch (the informer), patch (the
 * finalizer, a merge patch with the resourceVersion), get (re-reading after a 409 on that patch),
 * and update of the status subresource (a conditional replace).
 */
export function flowRules(resource: ResourceType): KubeRule[] {
  return [
    {
      apiGroups: [resource.group],
      resources: [resource.plural],
      verbs: ["get", "list", "watch", "patch"],
      why:
        "list and watch: the informers. patch: adding and removing the finalizer (a merge patch " +
        "carrying the resourceVersion). get: re-reading an object from the API server after such a " +
        "patch met a 409 Conflict. No update: the operator never replaces a whole object. No " +
        "<kind>/finalizers rule: custom resources have no such endpoint, and only the " +
        "OwnerReferencesPermissionEnforcement admission plugin consults it, for objects that set " +
        "blockOwnerDeletion on an owner reference to these kinds, which the operator never creates.",
    },
    {
      apiGroups: [resource.group],
      resources: [`${resource.plural}/status`],
      verbs: ["update"],
      why: "Status is written with a conditional replace (PUT with resourceVersion) of the subresource.",
    },
  ];
}
