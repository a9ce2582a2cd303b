import { ApiError } from "../../kube/errors.ts";
import type { LeaderElectionRecord, ObservedRecord, ResourceLock } from "../lease-lock.ts";

/**
 * An in-memory {@link ResourceLock} with the API server's optimistic-concurrency rules, shared by
 * several electors in unit tests. `failures` makes the next calls fail with a 500.
 */
export class MemoryLock implements ResourceLock {
  stored: ObservedRecord | undefined;
  failures = 0;
  writes = 0;
  #rv = 0;

  describe(): string {
    return "test/lock";
  }

  async get(signal: AbortSignal): Promise<ObservedRecord | undefined> {
    this.#check(signal);
    return this.stored === undefined
      ? undefined
      : { record: { ...this.stored.record }, resourceVersion: this.stored.resourceVersion };
  }

  async create(record: LeaderElectionRecord, signal: AbortSignal): Promise<string> {
    this.#check(signal);
    if (this.stored !== undefined) throw new ApiError({ status: 409, reason: "AlreadyExists" });
    return this.#write(record);
  }

  async update(record: LeaderElectionRecord, resourceVersion: string, signal: AbortSignal): Promise<string> {
    this.#check(signal);
    if (this.stored === undefined) throw new ApiError({ status: 404, reason: "NotFound" });
    if (this.stored.resourceVersion !== resourceVersion)
      throw new ApiError({ status: 409, reason: "Conflict" });
    return this.#write(record);
  }

  /** Another process overwriting the record, regardless of resourceVersion. */
  overwrite(record: LeaderElectionRecord): void {
    this.#write(record);
  }

  #write(record: LeaderElectionRecord): string {
    this.writes++;
    const rv = String(++this.#rv);
    this.stored = { record: { ...record }, resourceVersion: rv };
    return rv;
  }

  #check(signal: AbortSignal): void {
    signal.throwIfAborted();
    if (this.failures > 0) {
      this.failures--;
      throw new ApiError({ status: 500, reason: "InternalError", message: "injected failure" });
    }
  }
}
