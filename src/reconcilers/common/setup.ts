/**
 * Wires one managed kind into the manager: its reconciler (the shared flow plus the kind's
 * driver), its controller on the shared informer, its Event recorder, and its series of the
 * managed-resource metrics (metrics.ts).
 */
import type { Registry } from "prom-client";
import type { AwsClientSource } from "../../aws/clients.ts";
import type { PollDemand } from "../../aws/poll-demand.ts";
import type { Client } from "../../runtime/client/index.ts";
import type { Clock } from "../../runtime/clock.ts";
import {
  APPROVED_CHANGES_ANNOTATION,
  PAUSED_ANNOTATION,
  POLL_INTERVAL_ANNOTATION,
  RECONCILE_REQUESTED_AT_ANNOTATION,
} from "../../api/v1/index.ts";
import {
  annotationChanged,
  generationChanged,
  or,
  newControllerManagedBy,
  type MapFunc,
  type Controller,
  type InformerProvider,
} from "../../runtime/controller/index.ts";
import type { EventBroadcaster } from "../../runtime/events/recorder.ts";
import type { KubeObject, ResourceType } from "../../runtime/kube/object.ts";
import type { Logger } from "../../runtime/logging.ts";
import type { Runnable } from "../../runtime/manager/runnable.ts";
import type { AccountResolver } from "./account.ts";
import type { ManagedObject } from "./driver.ts";
import type { IamAction } from "./iam.ts";
import type { Connector } from "./flow/connector.ts";
import type { InstallAdoption, OwnerDirectory } from "./ownership.ts";
import type { ResyncHooks } from "./resync.ts";
import type { TagPolicy } from "./tags.ts";
import { ManagedResourceReconciler } from "./flow/reconciler.ts";
import { DEFAULT_POLL_INTERVAL_MS } from "./defaults.ts";
import { countDriftedPaths, countManagedResources, DriftRepairMetrics } from "./metrics.ts";
import {
  ConfigMapResource,
  OutputWriter,
  SecretResource,
  type ConfigMap,
  type OutputValues,
  type Secret,
} from "./outputs.ts";

/**
 * The annotations whose change enqueues an object, though it leaves its generation as it was: the
 * paused annotation (./pause.ts), so removing it resumes at once; the poll interval (./timing.ts),
 * so a new period applies from now; a reconcile request (./timing.ts), which asks for exactly
 * that; and an approval of held changes (./flow/change-policy.ts), applied at once.
 */
export const ENQUEUEING_ANNOTATIONS: readonly string[] = Object.freeze([
  APPROVED_CHANGES_ANNOTATION,
  PAUSED_ANNOTATION,
  POLL_INTERVAL_ANNOTATION,
  RECONCILE_REQUESTED_AT_ANNOTATION,
]);

/** What every controller of the process is built from, whatever it reconciles. */
export interface ProcessDeps {
  client: Client;
  informers: InformerProvider;
  events: Pick<EventBroadcaster, "recorderFor">;
  manager: { add(runnable: Runnable): unknown };
  logger: Logger;
  registry: Registry;
  clock: Clock;
}

/** What every reconciler of a managed kind is built from; shared process-wide. */
export interface ReconcilerDeps extends ProcessDeps {
  aws: AwsClientSource;
  /** Who the objects named by resources' ownership tags are (the shared cache). */
  owners: OwnerDirectory;
  /** Who may adopt among the objects acting with the operator's own identity. @default NO_ADOPTION */
  adoption?: InstallAdoption;
  /** What the drivers may do to the tags of the resources they own. @default DEFAULT_TAG_POLICY */
  tagPolicy?: TagPolicy | undefined;
  /** Workers per controller. @default 1 */
  maxConcurrentReconciles?: number;
  /** Steady-state poll period, in ms. @default 300_000 */
  pollIntervalMs?: number;
  /** First poll interval while a resource is in transition, in ms (`--pending-poll-initial`). @default 2000 */
  pendingInitialMs?: number;
  /** Largest poll interval while a resource is in transition, in ms (`--pending-poll-max`). @default 30000 */
  pendingMaxMs?: number;
  /** Resolves each object's AWS account (src/accounts). @default the operator's own for every object */
  accounts?: AccountResolver | undefined;
  /** AWS change events: what enqueues objects besides Kubernetes, and their poll period (./resync.ts). */
  resync?: ResyncHooks | undefined;
  /** What polls cost the AWS rate budgets, shared by every kind (src/aws/poll-demand.ts). @default not counted */
  polls?: PollDemand | undefined;
  /** Namespaces where spec.writeOutputsTo.secretName may be written (`--output-secret-namespaces`). @default none */
  outputSecretNamespaces?: readonly string[];
  /**
   * Bulk tag reads for the steady polls of S3 buckets and SQS queues (`--bulk-tag-reads`, with
   * `--bulk-tag-window`; ./tag-snapshots.ts). @default off
   */
  bulkTagReads?: { readonly windowMs: number } | undefined;
  /**
   * The kinds whose controllers this operator runs (`--controllers`), as their Kubernetes kind
   * names; a reference to an object of another kind waits with `ReferencedKindNotRunning`.
   * @default every kind
   */
  runningKinds?: readonly string[];
}

/**
 * Builds the controller of one kind and adds it to the manager. The controller enqueues an
 * object when it appears and when its generation changes (a spec edit, the start of a
 * deletion): the operator's own status and finalizer writes do not come back as reconciles that
 * would only observe AWS again. A change of one of {@link ENQUEUEING_ANNOTATIONS} enqueues it too,
 * and no other metadata change does. Every reconcile ends with an explicit `requeueAfter` (the short
 * pending poll after a create, the steady poll once settled), and that poll is what catches
 * drift in AWS; a write that lost a conflict requeues itself shortly. The generation filter is
 * on the kind's own source only: `watches` see every change of the objects they watch (a
 * dead-letter queue's status gaining its ARN is what its referrers wait for). With `outputs`, the
 * controller owns the ConfigMaps of `spec.writeOutputsTo`, and its Secrets when
 * `outputSecretNamespaces` names any namespace (the Secret informer watches only those): a change
 * or deletion of one by someone else enqueues its owner, which repairs it.
 */
export function setupManagedController<T extends ManagedObject, R, Ref = undefined>(
  name: string,
  resource: ResourceType,
  connector: Connector<T, R, Ref>,
  /** What an object's references resolve to, from the shared cache (KindDefinition.references). */
  references: (obj: T) => Ref,
  deps: ReconcilerDeps,
  /** Further sources: objects whose changes enqueue objects of this kind (map to their keys). */
  watches: readonly { resource: ResourceType; map: MapFunc<KubeObject> }[] = [],
  /** The kind's output values for `spec.writeOutputsTo`; pure. */
  outputs?: (obj: T) => OutputValues,
  /** The IAM actions the kind's driver calls, which an AccessDenied names. */
  iam: readonly IamAction[] = [],
): Controller {
  const client = deps.client.resource<T>(resource);
  countManagedResources(deps.registry, resource.kind, () => client.list());
  countDriftedPaths(deps.registry, resource.kind, () => client.list());
  const reconciler = managedReconciler(name, resource, connector, references, deps, outputs, iam);
  const builder = newControllerManagedBy(deps)
    .for<T>(resource, {
      predicates: [or(generationChanged<T>(), annotationChanged<T>(ENQUEUEING_ANNOTATIONS))],
    })
    .named(name)
    .withOptions({ maxConcurrentReconciles: deps.maxConcurrentReconciles ?? 1 });
  for (const w of watches) builder.watches(w.resource, w.map);
  if (outputs !== undefined) builder.owns(ConfigMapResource);
  if (outputs !== undefined && (deps.outputSecretNamespaces ?? []).length > 0) builder.owns(SecretResource);
  for (const s of deps.accounts?.sources ?? [])
    builder.watches(s.resource, (o) => s.affected(o, client.list()));
  const controller = builder.complete(reconciler);
  if (deps.resync !== undefined) controller.watch(deps.resync.source(resource));
  return controller;
}

/**
 * The reconciler of one kind (the shared flow with its driver), as its controller runs it; for
 * {@link setupManagedController} and for driving reconciles directly (`make bench-noop`).
 */
export function managedReconciler<T extends ManagedObject, R, Ref = undefined>(
  name: string,
  resource: ResourceType,
  connector: Connector<T, R, Ref>,
  /** What an object's references resolve to, from the shared cache (KindDefinition.references). */
  references: (obj: T) => Ref,
  deps: Omit<ReconcilerDeps, "manager" | "informers" | "maxConcurrentReconciles">,
  /** The kind's output values for `spec.writeOutputsTo`; pure. */
  outputs?: (obj: T) => OutputValues,
  /** The IAM actions the kind's driver calls, which an AccessDenied names. */
  iam: readonly IamAction[] = [],
): ManagedResourceReconciler<T, R, Ref> {
  return new ManagedResourceReconciler<T, R, Ref>({
    resource,
    iam,
    client: deps.client.resource<T>(resource),
    connector,
    references,
    recorder: deps.events.recorderFor(`${name}-controller`),
    clock: deps.clock,
    owners: deps.owners,
    adoption: deps.adoption,
    pollIntervalMs: deps.pollIntervalMs,
    pendingInitialMs: deps.pendingInitialMs,
    pendingMaxMs: deps.pendingMaxMs,
    pollIntervalFor: deps.resync === undefined ? undefined : pollIntervalOf(deps.resync, deps.pollIntervalMs),
    takeChangeHint:
      deps.resync === undefined ? undefined : (key: string) => deps.resync?.takeHint(resource, key),
    polls: deps.polls,
    driftRepairs: new DriftRepairMetrics(
      deps.registry,
      resource.kind,
      connector.traits.driftSettings,
      connector.traits.reportedSettings,
    ),
    outputs:
      outputs === undefined
        ? undefined
        : new OutputWriter<T>({
            configMaps: deps.client.resource<ConfigMap>(ConfigMapResource),
            secrets: {
              client: deps.client.resource<Secret>(SecretResource),
              namespaces: deps.outputSecretNamespaces ?? [],
            },
            values: outputs,
          }),
  });
}

/** The steady poll period of an object, from the resync hook and the normal period. */
function pollIntervalOf(
  resync: ResyncHooks,
  normalMs = DEFAULT_POLL_INTERVAL_MS,
): (obj: Readonly<ManagedObject>) => number {
  return (obj) => resync.pollIntervalMs(obj, normalMs);
}
