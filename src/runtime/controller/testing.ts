/**
 * In-memory stand-ins for the controller's collaborators, for unit tests of controllers and
 * reconcilers: a recording queue and a hand-driven informer. Not for production use.
 */
import { keyOf, type KubeObject } from "../kube/object.ts";
import type { ControllerQueue, QueueGetResult } from "./queue.ts";
import type { InformerEventHandler, InformerLike } from "./sources.ts";

/**
 * A queue that records every call in {@link ops} (`"add a/b"`, `"addAfter a/b 1000"`, ...) and
 * keeps client-go's single-flight rule, but applies no delays: `addAfter` and `addRateLimited` are
 * only recorded. `failOn` makes one operation throw, to test that callers survive it.
 */
export class RecordingQueue implements ControllerQueue {
  readonly ops: string[] = [];
  failOn: Partial<Record<"addRateLimited" | "forget" | "addAfter", Error>> = {};
  readonly #queue: string[] = [];
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  #waiters: ((r: QueueGetResult) => void)[] = [];
  #drainers: (() => void)[] = [];
  #shutdown = false;

  add(item: string): void {
    this.ops.push(`add ${item}`);
    if (this.#shutdown || this.#dirty.has(item)) return;
    this.#dirty.add(item);
    if (this.#processing.has(item)) return;
    this.#push(item);
  }

  addAfter(item: string, ms: number): void {
    this.ops.push(`addAfter ${item} ${ms}`);
    const err = this.failOn.addAfter;
    if (err) throw err;
  }

  addRateLimited(item: string): void {
    this.ops.push(`addRateLimited ${item}`);
    const err = this.failOn.addRateLimited;
    if (err) throw err;
  }

  forget(item: string): void {
    this.ops.push(`forget ${item}`);
    const err = this.failOn.forget;
    if (err) throw err;
  }

  get(): Promise<QueueGetResult> {
    const item = this.#queue.shift();
    if (item !== undefined) return Promise.resolve(this.#take(item));
    if (this.#shutdown) return Promise.resolve({ shutdown: true });
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  done(item: string): void {
    this.ops.push(`done ${item}`);
    this.#processing.delete(item);
    if (this.#dirty.has(item) && !this.#shutdown) this.#push(item);
    if (this.#processing.size === 0) {
      for (const d of this.#drainers.splice(0)) d();
    }
  }

  len(): number {
    return this.#queue.length;
  }

  /** Keys currently held by a worker. */
  processing(): string[] {
    return [...this.#processing];
  }

  shutDown(): void {
    this.#shutdown = true;
    for (const w of this.#waiters.splice(0)) w({ shutdown: true });
  }

  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.#processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drainers.push(resolve));
  }

  #push(item: string): void {
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) waiter(this.#take(item));
    else this.#queue.push(item);
  }

  #take(item: string): QueueGetResult {
    this.#dirty.delete(item);
    this.#processing.add(item);
    return { item, shutdown: false };
  }
}

/**
 * An informer driven by hand: call {@link add}/{@link update}/{@link remove} and
 * {@link markSynced}. Like a shared informer, it keeps the current objects and replays them as
 * `onAdd(obj, true)` to a handler added later.
 */
export class ManualInformer<T extends KubeObject> implements InformerLike<T> {
  readonly handlers: InformerEventHandler<T>[] = [];
  readonly #objects = new Map<string, T>();
  #synced: boolean;
  #syncWaiters: (() => void)[] = [];

  constructor(opts: { synced?: boolean } = {}) {
    this.#synced = opts.synced ?? true;
  }

  addEventHandler(handler: InformerEventHandler<T>): { remove(): void } {
    this.handlers.push(handler);
    for (const obj of this.#objects.values()) handler.onAdd(obj, true);
    return {
      remove: () => {
        const i = this.handlers.indexOf(handler);
        if (i >= 0) this.handlers.splice(i, 1);
      },
    };
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  waitForCacheSync(signal: AbortSignal): Promise<boolean> {
    if (this.#synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      signal.addEventListener("abort", () => resolve(false), { once: true });
      this.#syncWaiters.push(() => resolve(true));
    });
  }

  markSynced(): void {
    this.#synced = true;
    for (const w of this.#syncWaiters.splice(0)) w();
  }

  add(obj: T, isInInitialList = false): void {
    this.#objects.set(keyOf(obj), obj);
    for (const h of this.handlers) h.onAdd(obj, isInInitialList);
  }

  update(oldObj: T, newObj: T): void {
    this.#objects.set(keyOf(newObj), newObj);
    for (const h of this.handlers) h.onUpdate(oldObj, newObj);
  }

  remove(obj: T): void {
    this.#objects.delete(keyOf(obj));
    for (const h of this.handlers) h.onDelete(obj);
  }
}
