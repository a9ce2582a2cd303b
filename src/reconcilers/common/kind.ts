/**
 * A managed kind as one value: everything the rest of the operator needs to know about it. Each
 * kind folder's index.ts exports one {@link KindModule}; src/kinds.ts lists them, and the
 * controllers, the CRDs, the chart's ClusterRole (and config/rbac rendered from it), the e2e RBAC
 * expectations and the IAM table of docs/aws.md are all derived from that list.
 */
import type { CustomResourceDefinition } from "../../api/schema/crd.ts";
import { CHANGE_EVENT_INDEX, type ChangeEventNaming } from "../../change-events/naming.ts";
import type { IndexFunc } from "../../runtime/cache/index.ts";
import type { Controller, MapFunc } from "../../runtime/controller/index.ts";
import type { KubeObject, ResourceType } from "../../runtime/kube/object.ts";
import { AccountConnector } from "./flow/connector.ts";
import type { ManagedObject, ResourceDriver } from "./driver.ts";
import type { Reconciler } from "../../runtime/controller/reconciler.ts";
import { OUTPUT_RULES, type OutputValues } from "./outputs.ts";
import { managedReconciler, setupManagedController, type ReconcilerDeps } from "./setup.ts";
import type { IamAction } from "./iam.ts";

export { callsOf, type IamAction, type IamFeature } from "./iam.ts";

/** One rule of a Kubernetes (Cluster)Role. */
export interface KubeRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  /** Why the operator needs the rule, for the comment above it in the generated ClusterRole. */
  readonly why?: string;
}

/** A managed kind; see the module comment. */
export interface KindModule {
  /** Controller name: the `controller` label of its metrics; Events come from `<name>-controller`. */
  readonly name: string;
  readonly resource: ResourceType;
  /** Its CustomResourceDefinition, freshly built per call. */
  crd(): CustomResourceDefinition;
  /** Every IAM action its driver calls. */
  readonly iam: readonly IamAction[];
  /** The Kubernetes API calls its controller makes on its own resource. */
  readonly kubernetes: readonly KubeRule[];
  /**
   * The other kinds whose objects its objects name and its controller watches (read from the
   * cache only: list and watch): an operator running this kind keeps an informer of them even
   * when their own controller is left out (`--controllers`).
   */
  readonly references: readonly ResourceType[];
  /**
   * Indexes the shared cache keeps on the kind's objects, by name, for lookups its watches make
   * (the queues that name a dead-letter queue) without a scan.
   */
  readonly indexers: Readonly<Record<string, IndexFunc<KubeObject>>>;
  /** How its resources are named in AWS change events (src/change-events); none: events skip it. */
  readonly changeEvents?: ChangeEventNaming | undefined;
  /** Builds its controller (the shared flow with its driver) and adds it to `deps.manager`. */
  setup(deps: ReconcilerDeps): Controller;
  /** Builds its reconciler alone (the shared flow with its driver), without a controller. */
  reconciler(deps: ReconcilerDeps): Reconciler;
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

/** One further source of a kind's controller: changes of `resource` enqueue the keys `map(deps)` returns. */
export interface KindWatch {
  readonly resource: ResourceType;
  readonly map: (deps: ReconcilerDeps) => MapFunc<KubeObject>;
}

/** The definition of a kind: its module without the derived parts. */
export interface KindDefinition<T extends ManagedObject, R> {
  readonly name: string;
  readonly resource: ResourceType;
  crd(): CustomResourceDefinition;
  readonly iam: readonly IamAction[];
  /** Builds the kind's driver from the shared dependencies (the AWS clients, clock, options). */
  driver(deps: ReconcilerDeps): ResourceDriver<T, R>;
  /**
   * Further sources of the kind's controller: objects whose changes enqueue objects of this kind
   * (mapped to their keys by the function `map` builds), e.g. a dead-letter queue enqueueing the
   * queues that name it. The resources are fixed, so the RBAC generator reads them without deps.
   */
  readonly watches?: readonly KindWatch[];
  /**
   * The values `spec.writeOutputsTo` writes into the object's ConfigMap, by key, from the object
   * with the status just computed (an absent value: undefined); pure. Without it the kind has no
   * outputs.
   */
  readonly outputs?: (obj: T) => OutputValues;
  /** Indexes of the kind's objects in the shared cache (see {@link KindModule.indexers}). */
  readonly indexers?: Readonly<Record<string, IndexFunc<T>>>;
  /**
   * How the kind's resources are named in AWS change events; its `namesOf` becomes the cache
   * index {@link CHANGE_EVENT_INDEX}.
   */
  readonly changeEvents?: ChangeEventNaming<T>;
}

/** The module of the kind `def`. */
export function defineKind<T extends ManagedObject, R>(def: KindDefinition<T, R>): KindModule {
  return {
    name: def.name,
    resource: def.resource,
    crd: def.crd,
    iam: def.iam,
    kubernetes: [...flowRules(def.resource), ...(def.outputs !== undefined ? OUTPUT_RULES : [])],
    references: [
      ...new Map(
        (def.watches ?? [])
          .map((w) => w.resource)
          .filter((r) => r.group !== def.resource.group || r.plural !== def.resource.plural)
          .map((r) => [`${r.group}/${r.plural}`, r] as const),
      ).values(),
    ],
    // The cache holds the kind's objects only; an index of them reads them as such.
    indexers: {
      ...def.indexers,
      ...(def.changeEvents !== undefined ? { [CHANGE_EVENT_INDEX]: def.changeEvents.namesOf } : {}),
    } as Readonly<Record<string, IndexFunc<KubeObject>>>,
    changeEvents: def.changeEvents as ChangeEventNaming | undefined,
    setup: (deps) =>
      setupManagedController<T, R>(
        def.name,
        def.resource,
        connectorOf(def, deps),
        deps,
        (def.watches ?? []).map((w) => ({ resource: w.resource, map: w.map(deps) })),
        def.outputs,
        def.iam,
      ),
    reconciler: (deps) =>
      managedReconciler<T, R>(def.name, def.resource, connectorOf(def, deps), deps, def.outputs, def.iam),
  };
}

/**
 * The connector of kind `def`: each AWS account gets its own driver, built with that account's
 * clients. The controller and the bench path share it.
 */
function connectorOf<T extends ManagedObject, R>(
  def: KindDefinition<T, R>,
  deps: ReconcilerDeps,
): AccountConnector<T, R> {
  return new AccountConnector<T, R>({
    build: (aws) => def.driver({ ...deps, aws }),
    own: deps.aws,
    accounts: deps.accounts,
  });
}
