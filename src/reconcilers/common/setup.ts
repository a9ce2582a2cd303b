/**
 * Wires one managed kind into the manager: its reconciler (the shared flow plus the kind's
 * driver), its controller on the shared informer, and its Event recorder.
 */
import type { Registry } from "prom-client";
import type { AwsClientSource } from "../../aws/clients.ts";
import type { Client } from "../../runtime/client/index.ts";
import type { Clock } from "../../runtime/clock.ts";
import {
  generationChanged,
  newControllerManagedBy,
  type Controller,
  type InformerProvider,
} from "../../runtime/controller/index.ts";
import type { EventBroadcaster } from "../../runtime/events/recorder.ts";
import type { ResourceType } from "../../runtime/kube/object.ts";
import type { Logger } from "../../runtime/logging.ts";
import type { Runnable } from "../../runtime/manager/runnable.ts";
import type { ManagedObject, ResourceDriver } from "./driver.ts";
import { ManagedResourceReconciler } from "./managed-reconciler.ts";

/** What every reconciler is built from; shared process-wide. */
export interface ReconcilerDeps {
  client: Client;
  informers: InformerProvider;
  aws: AwsClientSource;
  events: Pick<EventBroadcaster, "recorderFor">;
  manager: { add(runnable: Runnable): unknown };
  logger: Logger;
  registry: Registry;
  clock: Clock;
  /** Workers per controller. @default 1 */
  maxConcurrentReconciles?: number;
  /** Steady-state poll period, in ms. @default 300_000 */
  pollIntervalMs?: number;
  /** First and largest poll interval while a resource is in transition, in ms. @default 2000 / 30000 */
  pendingInitialMs?: number;
  pendingMaxMs?: number;
}

/**
 * Builds the controller of one kind and adds it to the manager. The controller enqueues an
 * object when it appears and when its generation changes (a spec edit, the start of a
 * deletion): the operator's own status and finalizer writes do not come back as reconciles that
 * would only observe AWS again. Every reconcile ends with an explicit `requeueAfter` (the short
 * pending poll after a create, the steady poll once settled), and that poll is what catches
 * drift in AWS; a write that lost a conflict requeues itself shortly.
 */
export function setupManagedController<T extends ManagedObject, R>(
  name: string,
  resource: ResourceType,
  driver: ResourceDriver<T, R>,
  deps: ReconcilerDeps,
): Controller {
  const reconciler = new ManagedResourceReconciler<T, R>({
    resource,
    client: deps.client.resource<T>(resource),
    driver,
    recorder: deps.events.recorderFor(`${name}-controller`),
    clock: deps.clock,
    ...(deps.pollIntervalMs !== undefined ? { pollIntervalMs: deps.pollIntervalMs } : {}),
    ...(deps.pendingInitialMs !== undefined ? { pendingInitialMs: deps.pendingInitialMs } : {}),
    ...(deps.pendingMaxMs !== undefined ? { pendingMaxMs: deps.pendingMaxMs } : {}),
  });
  return newControllerManagedBy({
    informers: deps.informers,
    manager: deps.manager,
    logger: deps.logger,
    clock: deps.clock,
    registry: deps.registry,
  })
    .for<T>(resource)
    .named(name)
    .withEventFilter(generationChanged())
    .withOptions({ maxConcurrentReconciles: deps.maxConcurrentReconciles ?? 1 })
    .complete(reconciler);
}
