/**
 * Everything the flow remembers about an object between its reconciles, in one record per
 * object key, forgotten at once by {@link KeyStates.forget} when the object is gone. Kept in
 * memory only: after a restart (or a leader change) every key starts afresh, which is safe by
 * construction. What the record holds:
 *
 * - **Transition polls** (EC2 `pending`, `stopping`, `shutting-down`): short at first, doubling
 *   per consecutive pending observation up to a cap (2 s to 30 s by default). After a restart
 *   polling starts short again, which is what one wants.
 * - **Blocked deletion looks** (a bucket that is not empty): 5 s doubling to 5 min, so the object
 *   goes soon after the obstacle does instead of after the rate limiter's ~17-minute ceiling.
 * - **The failure streak.** A throttled or transient AWS call that the next retry heals must not
 *   reach the object: recording it flips `Synced` to False and the next success flips it back,
 *   two status writes and two watch events for every watcher, for nothing. So failures are
 *   counted, and one is reported only once it persists: at least `minFailures` consecutive failed
 *   reconciles, the first of them at least `minDurationMs` ago. Any reconcile that ends without a
 *   failure ends the streak. After a restart a failure that still persists is reported again
 *   after one more streak.
 * - **Access retries.** A failure of the operator's access (AccessDenied, UnauthorizedOperation,
 *   missing credentials; `AwsErrorInfo.access`) heals once IAM is fixed, without a change to the
 *   object, so it is looked at again on a long backoff: one poll period (`--poll-interval`, 5
 *   minutes by default) doubling per consecutive failure, capped at an hour. A failure counts as
 *   a step of the ladder only when it ran at or after the retry it scheduled: a reconcile that
 *   comes sooner (a spec change, a poll that was already due, the object enqueued again while it
 *   was being reconciled) and fails the same way is not counted and keeps that retry as it was,
 *   so no step is skipped. The first reconcile that does not fail ends the backoff. After a
 *   restart the curve starts afresh.
 * - **A deferred create**: a create the rate budget deferred (NoPermitYetError), so the reconcile
 *   that comes back for the booked slot sends it again without observing AWS first. That is safe:
 *   the deferred reconcile observed nothing, recorded the token and sent nothing (the budget
 *   refused the call before it left the process). While the object is still the version that
 *   reconcile stored (same resourceVersion: no spec edit, no deletion, no other write) and the
 *   slot comes soon, a new observation could only find what someone else made in between, and
 *   every driver's create guards against that itself: EC2 launches with the recorded token as
 *   ClientToken, S3 answers BucketAlreadyOwnedByYou or BucketAlreadyExists, and SQS checks the
 *   UID tag of the queue CreateQueue answered with. Skipping the observation saves its calls on
 *   every deferral of a burst. After a restart every reconcile observes first.
 */
import {
  exponentialDelay,
  ladderStep,
  validateCurve,
  type ExponentialCurve,
  type LadderPosition,
} from "../../../runtime/backoff.ts";
import type { Clock } from "../../../runtime/clock.ts";
import { DEFAULT_PENDING_INITIAL_MS, DEFAULT_PENDING_MAX_MS, DEFAULT_POLL_INTERVAL_MS } from "../defaults.ts";

/** How long past its slot a deferred create is resumed without a new observation, in ms. */
export const RESUME_GRACE_MS = 30_000;

/** The curve of blocked-deletion looks: 5 s doubling to 5 min. */
export const BLOCKED_CURVE: ExponentialCurve = Object.freeze({ initialMs: 5000, maxMs: 300_000 });

/** The longest wait before an object whose access failed is looked at again, in ms: an hour. */
export const ACCESS_RETRY_MAX_MS = 3_600_000;

/**
 * The curve of access retries for a poll period of `pollIntervalMs`: the period, doubling, capped
 * at {@link ACCESS_RETRY_MAX_MS} (or at the period when that is longer). The AwsAccount
 * controller uses it too, with its check interval.
 */
export function accessRetryCurve(pollIntervalMs: number): ExponentialCurve {
  return Object.freeze({ initialMs: pollIntervalMs, maxMs: Math.max(ACCESS_RETRY_MAX_MS, pollIntervalMs) });
}

/** Options of {@link KeyStates}. */
export interface KeyStateOptions {
  clock: Clock;
  /** First transition poll interval in ms. @default 2000 */
  pendingInitialMs?: number | undefined;
  /** Largest transition poll interval in ms. @default 30_000 */
  pendingMaxMs?: number | undefined;
  /** Consecutive failed reconciles before a failure is reported. @default 3 */
  minFailures?: number | undefined;
  /** Time since the first failure of the streak before a failure is reported, in ms. @default 30_000 */
  minDurationMs?: number | undefined;
  /** The curve of access retries. @default accessRetryCurve(DEFAULT_POLL_INTERVAL_MS): 5 min doubling to 1 h */
  accessRetry?: ExponentialCurve | undefined;
}

/** What is remembered about one key; a record with nothing in it is dropped. */
interface KeyRecord {
  /** Consecutive transition polls. */
  pendingPolls: number;
  /** Consecutive looks at a blocked deletion. */
  blockedLooks: number;
  /** Access retries: the steps of the ladder taken, and when the retry of the last one is due. */
  access?: LadderPosition | undefined;
  /** The run of consecutive failed reconciles. */
  streak?: { failures: number; since: number } | undefined;
  /** A create the rate budget deferred, of the object stored as `resourceVersion`. */
  deferred?: { resourceVersion: string; until: number } | undefined;
}

/** The per-key state of one flow; see the module comment. */
export class KeyStates {
  readonly #clock: Clock;
  readonly #pending: ExponentialCurve;
  readonly #minFailures: number;
  readonly #minDurationMs: number;
  readonly #accessRetry: ExponentialCurve;
  readonly #records = new Map<string, KeyRecord>();

  constructor(opts: KeyStateOptions) {
    this.#clock = opts.clock;
    this.#pending = {
      initialMs: opts.pendingInitialMs ?? DEFAULT_PENDING_INITIAL_MS,
      maxMs: opts.pendingMaxMs ?? DEFAULT_PENDING_MAX_MS,
    };
    const { initialMs, maxMs } = this.#pending;
    if (!(initialMs > 0) || !(maxMs >= initialMs)) {
      throw new RangeError(`transition polls: need 0 < initialMs <= maxMs, got ${initialMs} and ${maxMs}`);
    }
    this.#minFailures = opts.minFailures ?? 3;
    this.#minDurationMs = opts.minDurationMs ?? 30_000;
    if (!Number.isInteger(this.#minFailures) || this.#minFailures < 1)
      throw new RangeError(`minFailures must be an integer >= 1, got ${this.#minFailures}`);
    if (!(this.#minDurationMs >= 0))
      throw new RangeError(`minDurationMs must be >= 0, got ${this.#minDurationMs}`);
    this.#accessRetry = opts.accessRetry ?? accessRetryCurve(DEFAULT_POLL_INTERVAL_MS);
    validateCurve(this.#accessRetry, "access retries");
    if (!(this.#accessRetry.initialMs > 0))
      throw new RangeError(`access retries: initialMs must be > 0, got ${this.#accessRetry.initialMs}`);
  }

  /** The curve of access retries, for messages that say when the next one comes. */
  get accessRetry(): ExponentialCurve {
    return this.#accessRetry;
  }

  /** Counts one more transition poll of `key` and returns its delay. */
  nextPendingPoll(key: string): number {
    const r = this.#record(key);
    return exponentialDelay(r.pendingPolls++, this.#pending);
  }

  /** The resource of `key` left its transition: the next one starts the curve afresh. */
  settled(key: string): void {
    this.#update(key, (r) => (r.pendingPolls = 0));
  }

  /** Counts one more look at the blocked deletion of `key` and returns its delay. */
  nextBlockedLook(key: string): number {
    const r = this.#record(key);
    return exponentialDelay(r.blockedLooks++, BLOCKED_CURVE);
  }

  /** The deletion of `key` is no longer blocked. */
  unblocked(key: string): void {
    this.#update(key, (r) => (r.blockedLooks = 0));
  }

  /** Counts one more failed reconcile of `key`; true once the failure has persisted. */
  failed(key: string): boolean {
    const now = this.#clock.now();
    const r = this.#record(key);
    const streak = (r.streak ??= { failures: 0, since: now });
    streak.failures += 1;
    return streak.failures >= this.#minFailures && now - streak.since >= this.#minDurationMs;
  }

  /** A reconcile of `key` ended without a failure (or with one that is not retried). */
  streakEnded(key: string): void {
    this.#update(key, (r) => (r.streak = undefined));
  }

  /**
   * A reconcile of `key` failed for the operator's access: returns the delay of the next look.
   * It takes the next step of the ladder only when it ran at or after the retry the last step
   * scheduled; one that ran sooner leaves the ladder as it is and returns the time left until
   * that retry.
   */
  nextAccessRetry(key: string): number {
    const r = this.#record(key);
    const { position, delay } = ladderStep(r.access, this.#clock.now(), this.#accessRetry);
    r.access = position;
    return delay;
  }

  /** A reconcile of `key` ended without a failure: the next access failure starts the curve afresh. */
  accessRestored(key: string): void {
    this.#update(key, (r) => (r.access = undefined));
  }

  /** Records that the create of `key`, stored as `resourceVersion`, was deferred for `retryAfterMs`. */
  deferCreate(key: string, resourceVersion: string | undefined, retryAfterMs: number): void {
    if (resourceVersion === undefined || resourceVersion === "") return;
    this.#record(key).deferred = {
      resourceVersion,
      until: this.#clock.now() + retryAfterMs + RESUME_GRACE_MS,
    };
  }

  /**
   * Whether the reconcile of `key` at `resourceVersion` resumes a deferred create (and may skip
   * the observation). Either way the deferral is used up.
   */
  resumesCreate(key: string, resourceVersion: string | undefined): boolean {
    const d = this.#records.get(key)?.deferred;
    if (d === undefined) return false;
    this.#update(key, (r) => (r.deferred = undefined));
    return d.resourceVersion === resourceVersion && this.#clock.now() <= d.until;
  }

  /** Whether anything is remembered about `key` (a transition, a blocked deletion, a failure streak, access retries, a deferred create). */
  remembers(key: string): boolean {
    return this.#records.has(key);
  }

  /** Forgets everything about `key` (the object is gone). */
  forget(key: string): void {
    this.#records.delete(key);
  }

  /** Keys with something remembered (for tests and leak checks). */
  size(): number {
    return this.#records.size;
  }

  #record(key: string): KeyRecord {
    let r = this.#records.get(key);
    if (r === undefined) {
      r = { pendingPolls: 0, blockedLooks: 0 };
      this.#records.set(key, r);
    }
    return r;
  }

  /** Applies `change` to the record of `key`, if any, and drops the record once it is empty. */
  #update(key: string, change: (r: KeyRecord) => void): void {
    const r = this.#records.get(key);
    if (r === undefined) return;
    change(r);
    if (
      r.pendingPolls === 0 &&
      r.blockedLooks === 0 &&
      r.access === undefined &&
      r.streak === undefined &&
      r.deferred === undefined
    )
      this.#records.delete(key);
  }
}
