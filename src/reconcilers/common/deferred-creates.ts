/**
 * Creates the rate budget deferred (NoPermitYetError), per object key, so the reconcile that
 * comes back for the booked slot sends the create again without observing AWS first.
 *
 * Why that is safe: the deferred reconcile observed nothing in AWS, recorded the token and sent
 * nothing (the budget refused the call before it left the process). When the object is still
 * the version that reconcile stored (same resourceVersion: no spec edit, no deletion, no other
 * write) and the slot comes soon, a new observation could only find what someone else made in
 * between, and every driver's create guards against that itself: EC2 launches with the recorded
 * token as ClientToken, S3 answers BucketAlreadyOwnedByYou or BucketAlreadyExists, and SQS checks
 * the UID tag of the queue CreateQueue answered with. Skipping the observation saves its calls
 * (two DescribeInstances for an instance never launched) on every deferral of a burst.
 * Kept in memory only: after a restart every reconcile observes first.
 */
import type { Clock } from "../../runtime/clock.ts";

/** How long past its slot a deferred create is resumed without a new observation, in ms. */
export const RESUME_GRACE_MS = 30_000;

/** Deferred creates by object key; see the module comment. */
export class DeferredCreates {
  readonly #clock: Clock;
  readonly #byKey = new Map<string, { resourceVersion: string; until: number }>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Records that the create of `key`, stored as `resourceVersion`, was deferred for `retryAfterMs`. */
  defer(key: string, resourceVersion: string | undefined, retryAfterMs: number): void {
    if (resourceVersion === undefined || resourceVersion === "") return;
    this.#byKey.set(key, { resourceVersion, until: this.#clock.now() + retryAfterMs + RESUME_GRACE_MS });
  }

  /**
   * Whether the reconcile of `key` at `resourceVersion` resumes a deferred create (and may skip
   * the observation). Either way the record is used up.
   */
  resume(key: string, resourceVersion: string | undefined): boolean {
    const d = this.#byKey.get(key);
    if (d === undefined) return false;
    this.#byKey.delete(key);
    return d.resourceVersion === resourceVersion && this.#clock.now() <= d.until;
  }

  /** Forgets `key` (the object is gone). */
  reset(key: string): void {
    this.#byKey.delete(key);
  }
}
