/**
 * The contract between a controller and the code that reconciles one kind: a request names an
 * object, never an event, and the returned {@link Result} or thrown error tells the controller
 * when to look again.
 */
import type { Logger } from "../logging.ts";
import type { ObjectKey } from "../kube/object.ts";

/**
 * Names the object to reconcile: `namespace` is absent for cluster-scoped kinds. It carries no
 * event and no object state; the reconciler re-reads the cache, which may already be newer than
 * whatever event caused the request.
 */
export type Request = ObjectKey;

/**
 * What a successful reconcile asks of the controller.
 *
 * - `{}` (or `requeueAfter` absent, zero, negative or not finite): the work is done; the key's
 *   backoff is reset and nothing runs again until an event enqueues the key.
 * - `{ requeueAfter: ms }` with `ms > 0`: done for now; the backoff is reset and the key comes back
 *   after `ms` milliseconds. This re-enqueue bypasses every predicate, so it is the reliable way
 *   to poll external state (a predicate can drop resync events, never this).
 *
 * A result is ignored when the reconcile throws: a thrown error always wins.
 */
export interface Result {
  /** Milliseconds until the key is reconciled again. */
  requeueAfter?: number;
  /**
   * The requeue is a poll: a look again at an object that is done, only in case the world
   * changed behind its back. Unless something else enqueues the key before it comes back, its
   * next reconcile has the cause `poll` ({@link ReconcileCause}).
   */
  poll?: boolean;
}

/**
 * Why a key is reconciled: `poll` when the only reason is the poll its previous reconcile asked
 * for ({@link Result.poll}), or the informers' initial list when the controller starts (what the
 * cache holds, not a change); `work` for anything else (an event of its own or of an object
 * mapped to it, a requeue that is not a poll, a retry after an error). A reconciler may let polls
 * yield to work; since the initial list also holds objects never reconciled, it should treat a
 * poll of an object that is not done as work.
 */
export type ReconcileCause = "work" | "poll";

/** Per-reconcile context handed to {@link Reconciler.reconcile}. */
export interface ReconcileContext {
  /** A child logger carrying `controller`, `namespace`, `name` and `reconcileId`. */
  logger: Logger;
  /**
   * Aborted when the controller gives up waiting for in-flight work during shutdown (after its
   * graceful timeout). Pass it to every I/O call so a stuck reconcile can be cut short. It is
   * NOT aborted merely because shutdown began: in-flight reconciles are allowed to finish.
   */
  signal: AbortSignal;
  /** A random id, unique per reconcile invocation, for correlating log lines. */
  reconcileId: string;
  /** Why the key is reconciled. @default "work" */
  cause?: ReconcileCause;
}

/**
 * Drives one object toward its desired state. Implementations must be level-based and
 * idempotent: running twice on the same state makes no second write. The controller guarantees
 * that one key is never reconciled by two workers at once, and nothing else.
 *
 * Throw to be retried with per-key exponential backoff; throw a {@link TerminalError} when a
 * retry cannot help (the key is then left alone until its next event).
 */
export interface Reconciler {
  reconcile(req: Request, ctx: ReconcileContext): Promise<Result>;
  /**
   * Told of each key the cache's initial list enqueues as a poll when the controller starts,
   * before that key's reconcile runs: a reconciler that accounts for the polls due counts the
   * whole replay from here, not only the part the workers have reached. Must not throw.
   * @default nothing
   */
  pollQueued?(req: Request): void;
}

/**
 * An error that retrying cannot fix (an invalid spec, a permanently rejected request). The
 * controller logs it, counts it in `controller_runtime_terminal_reconcile_errors_total`, and does
 * not requeue the key; the next change to the object (or an owned/watched object) enqueues it
 * again. It is also recognised when wrapped: an error whose `cause` chain contains a
 * `TerminalError` is terminal.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TerminalError";
  }
}

/** Whether `err`, or any error in its `cause` chain, is a {@link TerminalError}. Cycle-safe. */
export function isTerminalError(err: unknown): boolean {
  const seen = new Set<unknown>();
  let cur: unknown = err;
  while (cur instanceof Error && !seen.has(cur)) {
    if (cur instanceof TerminalError) return true;
    seen.add(cur);
    cur = cur.cause;
  }
  return false;
}

/**
 * Whether a thrown value looks like a programming error rather than an operational failure:
 * a thrown non-Error value, or a `ReferenceError`, `SyntaxError`, `RangeError`, `EvalError`, or a
 * `TypeError` without a `cause` (the runtime's own TypeErrors, such as reading a property of
 * `undefined`, have none; undici's network `TypeError("fetch failed")` always has one). These are
 * the TypeScript counterpart of a Go panic: counted in `controller_runtime_reconcile_panics_total`
 * and otherwise retried like any other error.
 */
export function isPanicLike(err: unknown): boolean {
  if (!(err instanceof Error)) return true;
  if (
    err instanceof ReferenceError ||
    err instanceof SyntaxError ||
    err instanceof RangeError ||
    err instanceof EvalError
  ) {
    return true;
  }
  return err instanceof TypeError && err.cause === undefined;
}
