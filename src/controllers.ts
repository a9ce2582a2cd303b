/**
 * Where the reconcilers are wired into the manager. `main` calls {@link registerControllers}
 * once, before the manager starts, with everything a controller needs.
 */
import type { Registry } from "prom-client";
import type { Options } from "./config/options.ts";
import type { InformerFactory } from "./runtime/cache/factory.ts";
import type { Clock } from "./runtime/clock.ts";
import type { EventBroadcaster } from "./runtime/events/recorder.ts";
import type { RestClient } from "./runtime/kube/rest.ts";
import type { Logger } from "./runtime/logging.ts";
import type { Manager } from "./runtime/manager/manager.ts";

/** What the controllers are built from; all of it is shared process-wide. */
export interface ControllerDeps {
  readonly options: Options;
  readonly rest: RestClient;
  /** The shared informer cache; it is already added to the manager. */
  readonly informers: InformerFactory;
  /** Hand each controller `events.recorderFor("<name>-controller")`. */
  readonly events: EventBroadcaster;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly clock: Clock;
}

/** Adds every controller to `manager` (leader-gated runnables). */
export function registerControllers(_manager: Manager, deps: ControllerDeps): void {
  deps.logger.warn("no controllers are registered yet");
}
