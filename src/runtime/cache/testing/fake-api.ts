import { ApiError } from "../../kube/errors.ts";
import { keyOf, type KubeList, type KubeObject } from "../../kube/object.ts";
import type { WatchEvent, WatchEventType } from "../../kube/watch.ts";
import type { ListerWatcher, ListOptions, WatchOptions } from "../lister-watcher.ts";

interface HistoryEntry<T> {
  rv: number;
  type: WatchEventType;
  obj: T;
}

interface Stream<T> {
  push(ev: WatchEvent<T> | Error | "end"): void;
}

/**
 * An in-memory collection with the list/watch semantics the reflector relies on, for unit
 * tests of the reflector's logic: resourceVersions, paged lists with continue tokens, watches
 * that replay history from a resourceVersion, compaction (410 for older resourceVersions and
 * continue tokens), and hooks to end or break open watches. Integration tests use the real API
 * server instead.
 */
export class FakeApi<T extends KubeObject> implements ListerWatcher<T> {
  readonly description = "fake";
  readonly listCalls: ListOptions[] = [];
  readonly watchCalls: WatchOptions[] = [];
  #rv = 1;
  #compactedRv = 0;
  #objects = new Map<string, T>();
  #history: HistoryEntry<T>[] = [];
  #streams = new Set<Stream<T>>();
  #snapshots = new Map<string, { rv: number; items: T[] }>();
  #failLists = 0;
  /** How a watch from a compacted resourceVersion fails. */
  goneAs: "event" | "response" = "event";

  /** Current resourceVersion. */
  get resourceVersion(): number {
    return this.#rv;
  }

  /** Number of watches currently open. */
  get openWatches(): number {
    return this.#streams.size;
  }

  create(obj: T): T {
    return this.#write("ADDED", obj);
  }

  update(obj: T): T {
    if (!this.#objects.has(keyOf(obj))) throw new Error(`update of missing ${keyOf(obj)}`);
    return this.#write("MODIFIED", obj);
  }

  delete(key: string): void {
    const old = this.#objects.get(key);
    if (old === undefined) throw new Error(`delete of missing ${key}`);
    this.#write("DELETED", old);
  }

  /** Sends a bookmark at the current resourceVersion to every open watch. */
  bookmark(): void {
    const ev: WatchEvent<T> = {
      type: "BOOKMARK",
      object: { metadata: { resourceVersion: String(this.#rv) } } as T,
    };
    for (const s of this.#streams) s.push(ev);
  }

  /** Drops all history: watches and continue tokens older than now get 410. */
  compact(): void {
    this.#compactedRv = this.#rv;
    this.#history = [];
  }

  /** Ends every open watch normally, as a server-side timeout does. */
  closeWatches(): void {
    for (const s of this.#streams) s.push("end");
  }

  /** Fails every open watch with `err`, as a dropped connection does. */
  breakWatches(err: Error = new Error("connection reset")): void {
    for (const s of this.#streams) s.push(err);
  }

  /** Makes the next `n` list calls fail. */
  failNextLists(n: number): void {
    this.#failLists = n;
  }

  async list(opts: ListOptions): Promise<KubeList<T>> {
    this.listCalls.push(opts);
    await Promise.resolve();
    if (this.#failLists > 0) {
      this.#failLists--;
      throw new Error("list failed");
    }
    let snap: { rv: number; items: T[] };
    let offset = 0;
    if (opts.continue !== undefined) {
      const [id, off] = opts.continue.split(":");
      const s = this.#snapshots.get(id ?? "");
      if (s === undefined || s.rv < this.#compactedRv) {
        throw new ApiError({ status: 410, reason: "Expired", message: "continue token too old" });
      }
      snap = s;
      offset = Number(off);
    } else {
      snap = { rv: this.#rv, items: [...this.#objects.values()].map((o) => structuredClone(o)) };
      this.#snapshots.set(String(this.#snapshots.size), snap);
    }
    const items = snap.items.slice(offset, offset + opts.limit);
    const next = offset + opts.limit;
    const id = opts.continue?.split(":")[0] ?? String(this.#snapshots.size - 1);
    return {
      metadata: {
        resourceVersion: String(snap.rv),
        ...(next < snap.items.length ? { continue: `${id}:${next}` } : {}),
      },
      items,
    };
  }

  async *watch(opts: WatchOptions, signal: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    this.watchCalls.push(opts);
    const from = Number(opts.resourceVersion);
    if (from < this.#compactedRv) {
      const status = { kind: "Status", code: 410, reason: "Expired", message: "too old resource version" };
      if (this.goneAs === "response") throw new ApiError({ status: 410, reason: "Expired", body: status });
      yield { type: "ERROR", object: status as unknown as T };
      return;
    }
    const queue: (WatchEvent<T> | Error | "end")[] = [];
    let wake: (() => void) | undefined;
    const stream: Stream<T> = {
      push(ev) {
        queue.push(ev);
        wake?.();
      },
    };
    for (const h of this.#history)
      if (h.rv > from) queue.push({ type: h.type, object: structuredClone(h.obj) });
    this.#streams.add(stream);
    const onAbort = (): void => stream.push("end");
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        const next = queue.shift();
        if (next === undefined) {
          await new Promise<void>((r) => (wake = r));
          wake = undefined;
          continue;
        }
        if (next === "end") return;
        if (next instanceof Error) throw next;
        yield next;
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.#streams.delete(stream);
    }
  }

  #write(type: WatchEventType, input: T): T {
    const obj = structuredClone(input);
    this.#rv++;
    obj.metadata = { ...obj.metadata, resourceVersion: String(this.#rv) };
    if (type === "DELETED") this.#objects.delete(keyOf(obj));
    else this.#objects.set(keyOf(obj), obj);
    this.#history.push({ rv: this.#rv, type, obj });
    for (const s of this.#streams) s.push({ type, object: structuredClone(obj) });
    return obj;
  }
}
