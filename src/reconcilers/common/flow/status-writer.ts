/**
 * The one writer of an object's status during a reconcile. It holds the object as last stored:
 * every write (a finalizer, a status) replaces it, so a later write, such as a failure recorded
 * after the token, goes on top of what this reconcile already wrote, with a current
 * resourceVersion. A status equal to the stored one (deep equality of the JSON form, as the API
 * server stores it) is not written.
 */
import { isDeepStrictEqual } from "node:util";
import type { Clock } from "../../../runtime/clock.ts";
import type { ResourceClient } from "../../../runtime/client/index.ts";
import type { Logger } from "../../../runtime/logging.ts";
import type { ManagedObject } from "../driver.ts";
import { withConditions, type ConditionSet } from "./conditions.ts";

/** The part of a `ResourceClient` the flow uses. */
export type ManagedObjectClient<T extends ManagedObject> = Pick<
  ResourceClient<T>,
  "get" | "addFinalizer" | "removeFinalizer" | "updateStatus"
>;

/** What every status a reconcile composes also records, whatever its step (../timing.ts). */
export type StatusAddition<T extends ManagedObject> = (
  status: NonNullable<T["status"]>,
  now: number,
) => NonNullable<T["status"]>;

/** Writes the status of one object for one reconcile; see the module comment. */
export class StatusWriter<T extends ManagedObject> {
  readonly #client: Pick<ManagedObjectClient<T>, "updateStatus">;
  readonly #clock: Clock;
  readonly #addition: StatusAddition<T> | undefined;
  #stored: T;

  /** `addition` goes into every status {@link conditioned} composes. */
  constructor(
    client: Pick<ManagedObjectClient<T>, "updateStatus">,
    clock: Clock,
    obj: T,
    addition?: StatusAddition<T>,
  ) {
    this.#client = client;
    this.#clock = clock;
    this.#stored = obj;
    this.#addition = addition;
  }

  /** The object as last stored. */
  get stored(): T {
    return this.#stored;
  }

  /** Takes `stored` (the answer of another write of the object) as the object's latest version. */
  storedAs(stored: T): T {
    this.#stored = withTypeMeta(stored, this.#stored);
    return this.#stored;
  }

  /**
   * The status of `obj` (the stored object by default) with the conditions of `set` applied, and
   * the writer's addition.
   */
  conditioned(set: ConditionSet, obj: T = this.#stored): NonNullable<T["status"]> {
    const now = this.#clock.now();
    const status = withConditions(obj, set, now);
    return this.#addition === undefined ? status : this.#addition(status, now);
  }

  /**
   * Writes `status` through the status subresource when it differs from the stored one, with
   * the stored resourceVersion (a stale cache gets a 409 and a retry, never an overwrite).
   * Returns the object as stored.
   */
  async write(status: NonNullable<T["status"]>): Promise<T> {
    const obj = this.#stored;
    if (isDeepStrictEqual(normalize(obj.status ?? {}), normalize(status))) return obj;
    return this.storedAs(await this.#client.updateStatus({ ...obj, status }));
  }

  /** {@link write}, logging instead of throwing when the write fails (a failure being recorded). */
  async writeQuietly(status: NonNullable<T["status"]>, logger: Logger): Promise<void> {
    try {
      await this.write(status);
    } catch (err) {
      logger.debug({ err }, "could not record the failure in status");
    }
  }
}

/** `stored` with the type meta of `like` (write responses may omit it). */
function withTypeMeta<T extends ManagedObject>(stored: T, like: T): T {
  stored.apiVersion = like.apiVersion;
  stored.kind = like.kind;
  return stored;
}

/** JSON form without undefined members, as the API server stores it. */
function normalize(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v)) as unknown;
}

/** Status fields the flow itself writes; every other status field is the driver's description. */
const FLOW_STATUS_FIELDS: ReadonlySet<string> = new Set([
  "observedGeneration",
  "conditions",
  "createToken",
  "createAttempt",
  "createRequestedAt",
  "lastHandledReconcileAt",
  "drift",
  "pendingChanges",
  "appliedChanges",
] satisfies (keyof NonNullable<ManagedObject["status"]>)[]);

/** `status` with every field the driver describes cleared (the resource is gone). */
export function clearedStatus<S extends object>(status: S): S {
  const out: Record<string, unknown> = { ...(status as Record<string, unknown>) };
  for (const k of Object.keys(out)) if (!FLOW_STATUS_FIELDS.has(k)) out[k] = undefined;
  return out as S;
}
