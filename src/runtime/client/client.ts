/**
 * The cached client: one entry point handing out typed {@link ResourceClient}s that read from
 * the shared informer cache and write to the API server.
 */
import type { KubeObject, ResourceType } from "../kube/object.ts";
import {
  ResourceClient,
  type CacheProvider,
  type ResourceClientDeps,
  type RestLike,
} from "./resource-client.ts";

/** Options of {@link Client}; normalised once by the constructor. */
export interface ClientOptions {
  /** Writes and live reads go here (a `RestClient`). */
  rest: RestLike;
  /** Cached reads come from here (the process's `InformerFactory`). */
  cache: CacheProvider;
  /**
   * Recorded in `managedFields` for every write, and the owner of server-side applied fields.
   * @default "kubeprovisioner"
   */
  fieldManager?: string;
  /**
   * Write attempts of `addFinalizer` / `removeFinalizer` before a run of 409s is reported.
   * @default 5
   */
  finalizerAttempts?: number;
}

/** The field manager of every write unless overridden. */
export const DEFAULT_FIELD_MANAGER = "kubeprovisioner";

/**
 * Hands out one {@link ResourceClient} per resource type (the same instance on every call).
 * Reading a kind through it makes the cache factory create that kind's informer; reads fail with
 * `CacheNotSyncedError` until that informer has been started and has synced.
 */
export class Client {
  readonly #deps: ResourceClientDeps;
  readonly #clients = new Map<string, ResourceClient<KubeObject>>();

  constructor(opts: ClientOptions) {
    const finalizerAttempts = opts.finalizerAttempts ?? 5;
    if (!Number.isInteger(finalizerAttempts) || finalizerAttempts < 1) {
      throw new TypeError(`Client: finalizerAttempts must be a positive integer, got ${finalizerAttempts}`);
    }
    this.#deps = {
      rest: opts.rest,
      cache: opts.cache,
      fieldManager: opts.fieldManager ?? DEFAULT_FIELD_MANAGER,
      finalizerAttempts,
    };
  }

  /**
   * The client of one resource type. `T` is trusted, not checked: pass the type that the
   * resource's schema produces, and the same `T` everywhere for one resource.
   */
  resource<T extends KubeObject>(type: ResourceType): ResourceClient<T> {
    const key = `${type.group}/${type.version}/${type.plural}`;
    let c = this.#clients.get(key);
    if (c === undefined) {
      c = new ResourceClient<KubeObject>(type, this.#deps);
      this.#clients.set(key, c);
    }
    return c as unknown as ResourceClient<T>;
  }
}
