/**
 * Typed access to one resource type: reads from the shared informer cache, writes to the API
 * server. The split is controller-runtime's default client: reads are free and may be a little
 * behind, writes go to the server and return what it stored.
 */
import {
  apiVersionOf,
  keyOf,
  parseKey,
  resourcePath,
  type KubeObject,
  type ObjectKey,
  type ResourceType,
  type ObjectRef,
} from "../kube/object.ts";
import { isNotFound, isStatus } from "../kube/errors.ts";
import type { Query, RestRequest } from "../kube/rest.ts";
import type { Store } from "../cache/store.ts";
import { CacheNotSyncedError, InvalidObjectError } from "./errors.ts";
import { addFinalizer, removeFinalizer, type FinalizerOptions } from "./finalizers.ts";
import { patchContentType, type Patch } from "./patch.ts";

/** The REST client operation the cached client uses (`RestClient` fits). */
export interface RestLike {
  request<R>(req: RestRequest): Promise<R>;
}

/** The part of a shared informer the cached client reads. */
export interface CachedInformerLike<T extends KubeObject> {
  readonly store: Pick<Store<T>, "get" | "list" | "byIndex">;
  hasSynced(): boolean;
}

/** Hands out the process's shared informer of a kind (an `InformerFactory` fits). */
export interface CacheProvider {
  informerFor<T extends KubeObject>(resource: ResourceType): CachedInformerLike<T>;
}

export type { ObjectRef } from "../kube/object.ts";

/** Options of every write. */
export interface WriteOptions {
  signal?: AbortSignal;
  /** Validate and run admission, but persist nothing (`dryRun=All`). @default false */
  dryRun?: boolean;
  /** Overrides the client's field manager for this request. */
  fieldManager?: string;
}

/** Options of {@link ResourceClient.delete}. */
export interface DeleteOptions extends Omit<WriteOptions, "fieldManager"> {
  /** How dependents are garbage-collected. @default the kind's default (Background for CRs) */
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
  /** The delete fails with 409 unless the stored object still has this uid / resourceVersion. */
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
}

/** What a delete left behind. */
export interface DeleteResult<T> {
  /**
   * `true`: the object no longer exists. `false`: it is marked for deletion
   * (`deletionTimestamp` set) and stays until its finalizers are removed.
   */
  deleted: boolean;
  /** The object as the server returned it, when it returned one. */
  object: T | undefined;
}

/** Options of {@link ResourceClient.list}. */
export interface ListOptions {
  /** Only this namespace. @default all namespaces */
  namespace?: string;
  /** Only objects carrying all these labels with these values. */
  labels?: Readonly<Record<string, string>>;
}

/** Shared settings of the resource clients of one {@link Client}. */
export interface ResourceClientDeps {
  rest: RestLike;
  cache: CacheProvider;
  fieldManager: string;
  finalizerAttempts: number;
}

/**
 * Reads and writes one resource type.
 *
 * Reads (`get`, `list`, `byIndex`) are synchronous cache reads: they return frozen objects that
 * must not be mutated (copy with `structuredClone` first), and they throw
 * {@link CacheNotSyncedError} until the kind's informer has synced. `get` returns `undefined` for
 * a missing object. Right after a write the cache may still hold the previous version.
 *
 * Writes go to the API server and resolve to the object the server stored. They reject with the REST
 * client's `ApiError` (classify with `isNotFound`, `isConflict`, ... or {@link ignoreNotFound})
 * or `TransportError`, and with {@link InvalidObjectError}, before any request, when the object
 * cannot address a URL (they never throw synchronously). Every write carries the client's field manager.
 */
export class ResourceClient<T extends KubeObject> {
  readonly type: ResourceType;
  readonly #deps: ResourceClientDeps;

  constructor(type: ResourceType, deps: ResourceClientDeps) {
    this.type = type;
    this.#deps = deps;
  }

  /** The cached object, or `undefined` when the cache has none. */
  get(ref: ObjectRef): Readonly<T> | undefined {
    return this.#informer().store.get(this.#key(ref));
  }

  /** Cached objects, filtered by namespace and labels. */
  list(opts: ListOptions = {}): readonly Readonly<T>[] {
    const all = this.#informer().store.list(opts.namespace);
    const labels = opts.labels;
    if (labels === undefined) return all;
    const want = Object.entries(labels);
    return all.filter((o) => want.every(([k, v]) => o.metadata.labels?.[k] === v));
  }

  /** Cached objects whose index `index` contains `value` (the index must exist on the informer). */
  byIndex(index: string, value: string): readonly Readonly<T>[] {
    return this.#informer().store.byIndex(index, value);
  }

  /** The object as the API server has it now, bypassing the cache; `undefined` on 404. */
  async getLive(ref: ObjectRef, opts: { signal?: AbortSignal } = {}): Promise<T | undefined> {
    try {
      return await this.#deps.rest.request<T>({ method: "GET", path: this.#path(ref), ...signalOf(opts) });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** POST: creates `obj` (`metadata.name` or `generateName` required). */
  async create(obj: T, opts: WriteOptions = {}): Promise<T> {
    const meta = obj.metadata;
    if (!meta.name && !meta.generateName)
      throw new InvalidObjectError(`create ${this.type.kind}: metadata.name or generateName required`);
    const namespace = this.#namespaceOf(
      meta.namespace,
      `create ${this.type.kind} ${meta.name ?? meta.generateName}`,
    );
    return this.#deps.rest.request<T>({
      method: "POST",
      path: resourcePath(this.type, { namespace }),
      query: this.#writeQuery(opts),
      body: this.#withTypeMeta(obj),
      ...signalOf(opts),
    });
  }

  /**
   * PUT: replaces the object, conditional on `metadata.resourceVersion` (required): a 409
   * Conflict means someone else wrote first; re-read and decide again. Changes to `status` are
   * ignored by the server when the kind has a status subresource.
   */
  async update(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.#put(obj, undefined, opts);
  }

  /**
   * PUT to the `/status` subresource: replaces only `status`, conditional on
   * `metadata.resourceVersion` (required). Does not change `metadata.generation`.
   */
  async updateStatus(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.#put(obj, "status", opts);
  }

  /** PATCH: applies `patch` to the object named by `ref`. */
  async patch(ref: ObjectRef, patch: Patch, opts: WriteOptions = {}): Promise<T> {
    return this.#patch(ref, patch, undefined, opts);
  }

  /** PATCH to the `/status` subresource; only `status` changes. */
  async patchStatus(ref: ObjectRef, patch: Patch, opts: WriteOptions = {}): Promise<T> {
    return this.#patch(ref, patch, "status", opts);
  }

  /**
   * DELETE. A 404 is thrown as `ApiError` (wrap in {@link ignoreNotFound} to treat "already
   * gone" as success). With finalizers present the object stays, marked for deletion.
   */
  async delete(ref: ObjectRef, opts: DeleteOptions = {}): Promise<DeleteResult<T>> {
    const body: Record<string, unknown> = { apiVersion: "v1", kind: "DeleteOptions" };
    if (opts.propagationPolicy !== undefined) body["propagationPolicy"] = opts.propagationPolicy;
    if (opts.preconditions !== undefined) body["preconditions"] = opts.preconditions;
    if (opts.gracePeriodSeconds !== undefined) body["gracePeriodSeconds"] = opts.gracePeriodSeconds;
    if (opts.dryRun) body["dryRun"] = ["All"];
    const res = await this.#deps.rest.request<T | { kind?: string } | undefined>({
      method: "DELETE",
      path: this.#path(ref),
      body,
      ...signalOf(opts),
    });
    if (res === undefined || isStatus(res)) return { deleted: true, object: undefined };
    const object = res as T;
    const pending =
      object.metadata?.deletionTimestamp !== undefined && (object.metadata.finalizers?.length ?? 0) > 0;
    return { deleted: !pending, object };
  }

  /**
   * Adds `finalizer` unless present, surviving concurrent writers (409, then a re-read from the
   * API server, then a retry). Resolves to the object with the finalizer; makes no request when
   * the given object already has it. Throws `ApiError` 404 when the object does not exist.
   */
  async addFinalizer(
    target: Readonly<T> | ObjectRef,
    finalizer: string,
    opts: FinalizerOptions = {},
  ): Promise<T> {
    return addFinalizer(this.#finalizerTarget(), target, finalizer, this.#finalizerOpts(opts));
  }

  /**
   * Removes every occurrence of `finalizer`, surviving concurrent writers. Resolves to the
   * object as the server left it, or `undefined` when the object is gone (already deleted, or
   * deleted by this very removal when it was the last finalizer of a deleting object).
   */
  async removeFinalizer(
    target: Readonly<T> | ObjectRef,
    finalizer: string,
    opts: FinalizerOptions = {},
  ): Promise<T | undefined> {
    return removeFinalizer(this.#finalizerTarget(), target, finalizer, this.#finalizerOpts(opts));
  }

  #finalizerTarget() {
    return {
      kind: this.type.kind,
      getLive: (ref: ObjectRef, signal: AbortSignal | undefined) =>
        this.getLive(ref, signal ? { signal } : {}),
      patch: (ref: ObjectRef, patch: Patch, signal: AbortSignal | undefined) =>
        this.patch(ref, patch, signal ? { signal } : {}),
    };
  }

  #finalizerOpts(opts: FinalizerOptions): FinalizerOptions {
    return { attempts: this.#deps.finalizerAttempts, ...opts };
  }

  async #put(obj: T, subresource: "status" | undefined, opts: WriteOptions): Promise<T> {
    const what = `${subresource ? "updateStatus" : "update"} ${this.type.kind} ${keyOf(obj)}`;
    if (!obj.metadata.resourceVersion)
      throw new InvalidObjectError(`${what}: metadata.resourceVersion required`);
    return this.#deps.rest.request<T>({
      method: "PUT",
      path: this.#path(obj, subresource),
      query: this.#writeQuery(opts),
      body: this.#withTypeMeta(obj),
      ...signalOf(opts),
    });
  }

  async #patch(
    ref: ObjectRef,
    patch: Patch,
    subresource: "status" | undefined,
    opts: WriteOptions,
  ): Promise<T> {
    const query = this.#writeQuery(opts);
    let body: unknown;
    switch (patch.type) {
      case "merge":
        body = patch.patch;
        break;
      case "json":
        body = patch.ops;
        break;
      case "apply": {
        const key = this.#objectKey(ref);
        const meta = {
          ...(patch.object.metadata ?? {}),
          name: key.name,
          ...(key.namespace ? { namespace: key.namespace } : {}),
        };
        body = { ...patch.object, apiVersion: apiVersionOf(this.type), kind: this.type.kind, metadata: meta };
        query["force"] = patch.force ?? true;
        break;
      }
    }
    return this.#deps.rest.request<T>({
      method: "PATCH",
      path: this.#path(ref, subresource),
      query,
      body,
      contentType: patchContentType[patch.type],
      ...signalOf(opts),
    });
  }

  #informer() {
    const inf = this.#deps.cache.informerFor<T>(this.type);
    if (!inf.hasSynced()) throw new CacheNotSyncedError(this.type);
    return inf;
  }

  #writeQuery(opts: WriteOptions): Query {
    const q: Query = { fieldManager: opts.fieldManager ?? this.#deps.fieldManager };
    if (opts.dryRun) q["dryRun"] = "All";
    return q;
  }

  #withTypeMeta(obj: T): T {
    return { ...obj, apiVersion: apiVersionOf(this.type), kind: this.type.kind };
  }

  #objectKey(ref: ObjectRef): ObjectKey {
    const key: ObjectKey =
      typeof ref === "string"
        ? parseKey(ref)
        : "metadata" in ref
          ? {
              name: ref.metadata.name ?? "",
              ...(ref.metadata.namespace ? { namespace: ref.metadata.namespace } : {}),
            }
          : ref;
    if (!key.name) throw new InvalidObjectError(`${this.type.kind}: object name required`);
    const namespace = this.#namespaceOf(key.namespace, `${this.type.kind} ${key.name}`);
    return namespace ? { namespace, name: key.name } : { name: key.name };
  }

  #key(ref: ObjectRef): string {
    return keyOf(this.#objectKey(ref));
  }

  #path(ref: ObjectRef, subresource?: string): string {
    const key = this.#objectKey(ref);
    return resourcePath(this.type, { namespace: key.namespace, name: key.name, subresource });
  }

  /** The namespace to address: required for namespaced kinds, dropped for cluster-scoped ones. */
  #namespaceOf(namespace: string | undefined, what: string): string | undefined {
    if (!this.type.namespaced) return undefined;
    if (!namespace)
      throw new InvalidObjectError(`${what}: namespace required for namespaced kind ${this.type.kind}`);
    return namespace;
  }
}

function signalOf(opts: { signal?: AbortSignal | undefined }): { signal?: AbortSignal } {
  return opts.signal !== undefined ? { signal: opts.signal } : {};
}
