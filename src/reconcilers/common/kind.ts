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
import { previewObject, type ObjectPlan } from "./flow/preview.ts";
import { NO_ADOPTION } from "./ownership.ts";
import type { KindTraits } from "./kind-traits.ts";
import type { KindExporter } from "./export.ts";
import type { AwsClientSource } from "../../aws/clients.ts";
import type { ManagedObject, ResourceDriver } from "./driver.ts";
import type { Reconciler } from "../../runtime/controller/reconciler.ts";
import { OUTPUT_RULES, type OutputValues } from "./outputs.ts";
import { flowRules, type KubeRule } from "./rbac.ts";
import { managedReconciler, setupManagedController, type ReconcilerDeps } from "./setup.ts";
import type { IamAction } from "./iam.ts";

export { callsOf, type IamAction, type IamFeature } from "./iam.ts";
export { flowRules, type KubeRule } from "./rbac.ts";
export type { ObjectPlan, PlanAction } from "./flow/preview.ts";

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
  /**
   * Builds what `kubeprovisioner plan` asks of the kind: the plan of one object, what the flow
   * would do for it (./flow/preview.ts), computed with AWS reads only.
   */
  planner(deps: ReconcilerDeps): (obj: ManagedObject, signal: AbortSignal) => Promise<ObjectPlan>;
  /**
   * What `kubeprovisioner export` asks of the kind: its exporter with `aws` (one account's
   * clients), if the kind can be exported (./export.ts).
   */
  exporter?: ((deps: ReconcilerDeps, aws: AwsClientSource) => KindExporter) | undefined;
}

/** One further source of a kind's controller: changes of `resource` enqueue the keys `map(deps)` returns. */
export interface KindWatch {
  readonly resource: ResourceType;
  readonly map: (deps: ReconcilerDeps) => MapFunc<KubeObject>;
}

/** The definition of a kind: its module without the derived parts. */
export interface KindDefinition<T extends ManagedObject, R, Ref = undefined> {
  readonly name: string;
  readonly resource: ResourceType;
  crd(): CustomResourceDefinition;
  readonly iam: readonly IamAction[];
  /** What is fixed about the kind: its noun, identifier field and settings (./kind-traits.ts). */
  readonly traits: KindTraits<T>;
  /**
   * Builds what an object's references to other objects (a dead-letter queue's queueRef, a
   * notification's queueRef) resolve to: a step of the flow's own, after the object is connected
   * to its account and before its resource is observed, once per reconcile of a managed object
   * that is not being deleted; the result goes to the driver's create, plan and createActions.
   * It reads the shared cache only (no AWS call). A kind without references returns undefined.
   * The function it builds throws DependencyNotReadyError while a referenced object is missing
   * or not ready, and InvalidSpecError when a reference can never serve.
   */
  references(deps: ReconcilerDeps): (obj: T) => Ref;
  /** Builds the kind's driver from the shared dependencies (the AWS clients, clock, options). */
  driver(deps: ReconcilerDeps): ResourceDriver<T, R, Ref>;
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
  /** The kind's exporter with one account's clients (./export.ts); none: the kind is not exported. */
  readonly exporter?: (deps: ReconcilerDeps, aws: AwsClientSource) => KindExporter;
}

/** The module of the kind `def`. */
export function defineKind<T extends ManagedObject, R, Ref = undefined>(
  def: KindDefinition<T, R, Ref>,
): KindModule {
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
      setupManagedController<T, R, Ref>(
        def.name,
        def.resource,
        connectorOf(def, deps),
        def.references(deps),
        deps,
        (def.watches ?? []).map((w) => ({ resource: w.resource, map: w.map(deps) })),
        def.outputs,
        def.iam,
      ),
    reconciler: (deps) =>
      managedReconciler<T, R, Ref>(
        def.name,
        def.resource,
        connectorOf(def, deps),
        def.references(deps),
        deps,
        def.outputs,
        def.iam,
      ),
    exporter: def.exporter,
    planner: (deps) => {
      const preview = {
        connector: connectorOf(def, deps),
        references: def.references(deps),
        owners: deps.owners,
        adoption: deps.adoption ?? NO_ADOPTION,
        logger: deps.logger,
      };
      return (obj, signal) => previewObject<T, R, Ref>(preview, obj as T, signal);
    },
  };
}

/**
 * The connector of kind `def`: each AWS account gets its own driver, built with that account's
 * clients. The controller and the bench path share it.
 */
function connectorOf<T extends ManagedObject, R, Ref>(
  def: KindDefinition<T, R, Ref>,
  deps: ReconcilerDeps,
): AccountConnector<T, R, Ref> {
  return new AccountConnector<T, R, Ref>({
    build: (aws) => def.driver({ ...deps, aws }),
    traits: def.traits,
    own: deps.aws,
    accounts: deps.accounts,
  });
}
