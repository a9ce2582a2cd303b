import { keyOf, type KubeObject } from "../kube/object.ts";
import { silentLogger, type Logger } from "../logging.ts";

/** Computes the index values of an object; an object may sit under several values or none. */
export type IndexFunc<T> = (obj: Readonly<T>) => string[];

/** Name of the index every store has: the object's namespace (`""` for cluster-scoped objects). */
export const NAMESPACE_INDEX = "namespace";

/**
 * Name of the index {@link controllerUidIndex} computes: the UID of the object's controller (the
 * owner reference with `controller: true`), for finding the objects a controller owns.
 */
export const CONTROLLER_UID_INDEX = "controller-uid";

/** The UID of the object's controller, if it has one. */
export const controllerUidIndex: IndexFunc<KubeObject> = (obj) => {
  const uid = obj.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;
  return uid !== undefined && uid !== "" ? [uid] : [];
};

/**
 * Read-only view of an informer's cache. Objects are deep-frozen and carry no
 * `metadata.managedFields` and no `kubectl apply` last-applied annotation; to change one, `structuredClone` it first. Results are snapshots:
 * arrays returned are never modified afterwards.
 */
export interface Store<T extends KubeObject> {
  /** The object under `namespace/name` (`name` for cluster-scoped kinds). */
  get(key: string): Readonly<T> | undefined;
  /** All objects, or those of one namespace. */
  list(namespace?: string): readonly Readonly<T>[];
  /**
   * Objects whose index function returned `value`.
   * @throws Error when no index of that name exists.
   */
  byIndex(index: string, value: string): readonly Readonly<T>[];
  /** Every key, in insertion order. */
  keys(): string[];
}

/** Options of {@link ObjectStore}. */
export interface ObjectStoreOptions {
  /** Receives errors thrown by index functions. @default silentLogger */
  logger?: Logger;
}

/**
 * The indexed map behind an informer: key `namespace/name`, a `namespace` index, and custom
 * indexes. The mutating methods are for the informer alone; consumers get the {@link Store} view.
 *
 * Invariant: for every index `i`, `#indices.get(i).get(v)` holds key `k` exactly when
 * `#items.has(k)` and index function `i` returned `v` for `#items.get(k)`; empty value sets are
 * removed.
 */
export class ObjectStore<T extends KubeObject> implements Store<T> {
  readonly #items = new Map<string, Readonly<T>>();
  readonly #indexers = new Map<string, IndexFunc<T>>();
  readonly #indices = new Map<string, Map<string, Set<string>>>();
  readonly #log: Logger;

  constructor(opts: ObjectStoreOptions = {}) {
    this.#log = opts.logger ?? silentLogger;
    this.addIndexer(NAMESPACE_INDEX, (o) => [o.metadata.namespace ?? ""]);
  }

  /**
   * Adds an index and computes it for the objects already stored.
   * @throws Error when an index of that name exists.
   */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.#indexers.has(name)) throw new Error(`index ${JSON.stringify(name)} already exists`);
    this.#indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.#indices.set(name, index);
    for (const [key, obj] of this.#items) this.#addToIndex(name, fn, index, key, obj);
  }

  /** Whether an index of that name exists. */
  hasIndex(name: string): boolean {
    return this.#indexers.has(name);
  }

  get(key: string): Readonly<T> | undefined {
    return this.#items.get(key);
  }

  list(namespace?: string): readonly Readonly<T>[] {
    if (namespace === undefined) return [...this.#items.values()];
    return this.byIndex(NAMESPACE_INDEX, namespace);
  }

  byIndex(index: string, value: string): readonly Readonly<T>[] {
    const idx = this.#indices.get(index);
    if (idx === undefined) throw new Error(`no index named ${JSON.stringify(index)}`);
    const keys = idx.get(value);
    if (keys === undefined) return [];
    const out: Readonly<T>[] = [];
    for (const k of keys) {
      const obj = this.#items.get(k);
      if (obj !== undefined) out.push(obj);
    }
    return out;
  }

  keys(): string[] {
    return [...this.#items.keys()];
  }

  /** Number of objects. */
  get size(): number {
    return this.#items.size;
  }

  /**
   * Stores `obj` (already prepared by `prepareForCache`) under its key and returns the object it
   * replaced, if any.
   */
  set(obj: Readonly<T>): Readonly<T> | undefined {
    const key = keyOf(obj);
    const old = this.#items.get(key);
    if (old !== undefined) this.#removeFromIndices(key, old);
    this.#items.set(key, obj);
    for (const [name, fn] of this.#indexers) {
      const index = this.#indices.get(name);
      if (index !== undefined) this.#addToIndex(name, fn, index, key, obj);
    }
    return old;
  }

  /** Removes the object under `key` and returns it. */
  delete(key: string): Readonly<T> | undefined {
    const old = this.#items.get(key);
    if (old === undefined) return undefined;
    this.#removeFromIndices(key, old);
    this.#items.delete(key);
    return old;
  }

  #values(name: string, fn: IndexFunc<T>, obj: Readonly<T>): string[] {
    try {
      return fn(obj);
    } catch (err) {
      this.#log.error({ err, index: name, key: keyOf(obj) }, "index function threw; object not indexed");
      return [];
    }
  }

  #addToIndex(
    name: string,
    fn: IndexFunc<T>,
    index: Map<string, Set<string>>,
    key: string,
    obj: Readonly<T>,
  ): void {
    for (const v of this.#values(name, fn, obj)) {
      let set = index.get(v);
      if (set === undefined) index.set(v, (set = new Set()));
      set.add(key);
    }
  }

  #removeFromIndices(key: string, old: Readonly<T>): void {
    for (const [name, fn] of this.#indexers) {
      const index = this.#indices.get(name);
      if (index === undefined) continue;
      // Index functions are expected to be pure; a function returning different values for the
      // same object would leave stale entries, so sweep the values it returns now.
      for (const v of this.#values(name, fn, old)) {
        const set = index.get(v);
        if (set === undefined) continue;
        set.delete(key);
        if (set.size === 0) index.delete(v);
      }
    }
  }
}
