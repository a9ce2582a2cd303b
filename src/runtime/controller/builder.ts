/**
 * A fluent way to wire a controller to the shared informers (controller-runtime's
 * `NewControllerManagedBy(mgr).For(...).Owns(...).Watches(...).Complete(r)`). It is only a
 * convenience over {@link Controller}'s own `for`/`owns`/`watches`.
 */
import type { Registry } from "prom-client";
import type { Clock } from "../clock.ts";
import type { KubeObject, ResourceType } from "../kube/object.ts";
import type { Logger } from "../logging.ts";
import type { Runnable } from "../manager/runnable.ts";
import { Controller, type ControllerOptions } from "./controller.ts";
import { and, type Predicate } from "./predicates.ts";
import type { Reconciler } from "./reconciler.ts";
import type { InformerLike, MapFunc, SourceOptions } from "./sources.ts";

/** Hands out the process's shared informer of a kind (an `InformerFactory` fits). */
export interface InformerProvider {
  informerFor<T extends KubeObject>(resource: ResourceType): InformerLike<T>;
}

/** What the builder needs from its surroundings. */
export interface BuilderDeps {
  informers: InformerProvider;
  /** When given, {@link ControllerBuilder.complete} adds the controller to it. */
  manager?: { add(runnable: Runnable): unknown };
  logger?: Logger;
  clock?: Clock;
  registry?: Registry;
}

/** Controller options the builder leaves to the caller. */
export type BuilderControllerOptions = Omit<
  ControllerOptions,
  "name" | "reconciler" | "logger" | "clock" | "registry"
>;

type Watch = (c: Controller, filter: Predicate | undefined) => void;

/**
 * Collects the sources of one controller. `for` must be called exactly once; `owns` uses the
 * `for` kind as the owner. Predicates given to `withEventFilter` apply to every source, on top of
 * each source's own.
 */
export class ControllerBuilder {
  readonly #deps: BuilderDeps;
  #forResource: ResourceType | undefined;
  readonly #watches: Watch[] = [];
  readonly #filters: Predicate[] = [];
  #name: string | undefined;
  #options: BuilderControllerOptions = {};

  constructor(deps: BuilderDeps) {
    this.#deps = deps;
  }

  /** The kind this controller reconciles; its objects' events enqueue their own keys. */
  for<T extends KubeObject>(resource: ResourceType, opts: SourceOptions<T> = {}): this {
    if (this.#forResource !== undefined)
      throw new Error(`ControllerBuilder: for() already called with ${this.#forResource.kind}`);
    this.#forResource = resource;
    const informer = this.#deps.informers.informerFor<T>(resource);
    this.#watches.unshift((c, filter) => c.for(informer, withFilter(opts, filter)));
    return this;
  }

  /** A kind this controller creates; its events enqueue the controller owner of the `for` kind. */
  owns<T extends KubeObject>(resource: ResourceType, opts: SourceOptions<T> = {}): this {
    const informer = this.#deps.informers.informerFor<T>(resource);
    this.#watches.push((c, filter) => {
      const owner = this.#forResource;
      if (owner === undefined) throw new Error("ControllerBuilder: owns() needs for()");
      c.owns(informer, owner, withFilter(opts, filter));
    });
    return this;
  }

  /** Any kind; its events enqueue whatever `map` returns. */
  watches<T extends KubeObject>(resource: ResourceType, map: MapFunc<T>, opts: SourceOptions<T> = {}): this {
    const informer = this.#deps.informers.informerFor<T>(resource);
    this.#watches.push((c, filter) => c.watches(informer, map, withFilter(opts, filter)));
    return this;
  }

  /** Adds predicates applied to every source of this controller. */
  withEventFilter(...predicates: Predicate[]): this {
    this.#filters.push(...predicates);
    return this;
  }

  /** Worker count, timeouts, queue. */
  withOptions(options: BuilderControllerOptions): this {
    this.#options = { ...this.#options, ...options };
    return this;
  }

  /** The controller's name. @default the `for` kind in lower case */
  named(name: string): this {
    this.#name = name;
    return this;
  }

  /** Builds the controller (and adds it to the manager, when one was given). */
  complete(reconciler: Reconciler): Controller {
    const forResource = this.#forResource;
    if (forResource === undefined)
      throw new Error("ControllerBuilder: for() must be called before complete()");
    const d = this.#deps;
    const controller = new Controller({
      ...this.#options,
      name: this.#name ?? forResource.kind.toLowerCase(),
      reconciler,
      ...(d.logger !== undefined ? { logger: d.logger } : {}),
      ...(d.clock !== undefined ? { clock: d.clock } : {}),
      ...(d.registry !== undefined ? { registry: d.registry } : {}),
    });
    const filter = this.#filters.length > 0 ? and(...this.#filters) : undefined;
    for (const w of this.#watches) w(controller, filter);
    d.manager?.add(controller);
    return controller;
  }
}

/** Starts a {@link ControllerBuilder}. */
export function newControllerManagedBy(deps: BuilderDeps): ControllerBuilder {
  return new ControllerBuilder(deps);
}

function withFilter<T extends KubeObject>(
  opts: SourceOptions<T>,
  filter: Predicate | undefined,
): SourceOptions<T> {
  if (filter === undefined) return opts;
  return { ...opts, predicates: [...(opts.predicates ?? []), filter] };
}
