/**
 * The event source through which change events enqueue a kind's objects: the kind's controller
 * attaches it like its informer sources when it starts, and {@link ChannelSource.push} hands a key
 * to that controller's work queue at once (controller-runtime's channel source).
 */
import type { EventSource } from "../runtime/controller/sources.ts";
import type { Request } from "../runtime/controller/reconciler.ts";

/** See the module comment. */
export class ChannelSource implements EventSource {
  readonly description = "change-events source";
  #enqueue: ((req: Request) => void) | undefined;

  attach(enqueue: (req: Request) => void): () => void {
    this.#enqueue = enqueue;
    return () => {
      if (this.#enqueue === enqueue) this.#enqueue = undefined;
    };
  }

  hasSynced(): boolean {
    return true;
  }

  waitForCacheSync(): Promise<boolean> {
    return Promise.resolve(true);
  }

  /** Enqueues `req`; false when no controller is attached (it is not running). */
  push(req: Request): boolean {
    if (this.#enqueue === undefined) return false;
    this.#enqueue(req);
    return true;
  }
}
