/**
 * What a driver's calls are given: the logger, the abort signal, and what the flow knows about
 * the object that a driver may need (./flow/facts.ts derives it).
 */
import type { Logger } from "../../runtime/logging.ts";

/** What the flow knows about the object that a driver may need; derived by the flow alone. */
export interface FlowFacts {
  /** The object is being deleted: the observation serves {@link ResourceDriver.delete}. */
  readonly deleting: boolean;
  /**
   * The object is in steady state by its own record: a resource is recorded, it is not being
   * deleted, and Ready is True for the current generation.
   */
  readonly settled: boolean;
  /** The create attempt the flow recorded (its token, attempt and time), when there is one. */
  readonly create: RecordedCreate | undefined;
  /**
   * When the current create began (ms since the epoch: `status.createRequestedAt`, recorded with
   * the token before the create call), while one is in flight (Ready is False with reason
   * Creating) and no resource is recorded for it yet: the operator may have stopped between the
   * create call and the status write.
   */
  readonly createStartedAt: number | undefined;
  /**
   * An AWS change event named the resource since the last reconcile (./resync.ts), or the object
   * asks for a reconcile (its `compute.cloud.com/reconcile-requested-at` annotation, ./timing.ts):
   * observe it afresh, never from a snapshot read before the change or the request.
   */
  readonly changeHinted?: boolean;
  /**
   * The object's steady poll period, in ms: its `compute.cloud.com/poll-interval` annotation
   * (./timing.ts), else the operator's. A driver that answers steady polls from a shared snapshot
   * gives this object no answer older than half of it.
   * @default the operator's poll interval
   */
  readonly pollIntervalMs?: number;
  /**
   * This reconcile is a steady poll: its only cause is the periodic poll of a converged object
   * (the controller's cause, no change event hint, reconciled at its generation, nothing in
   * flight for it). Its AWS calls draw on the polls' share of the budgets (src/aws/poll-scope.ts).
   */
  readonly poll?: boolean;
}

/**
 * A create attempt as the flow records it before calling {@link ResourceDriver.create}: the
 * idempotency token, the attempt it belongs to (1 for the first create, one more per recreate
 * after an out-of-band deletion), and when it was recorded (renewed when a create is retried long
 * after it; ms since the epoch).
 */
export interface RecordedCreate {
  readonly token: string;
  readonly attempt: number;
  readonly requestedAt: number | undefined;
}

/** Per-call context of a driver. */
export interface DriverContext {
  logger: Logger;
  signal: AbortSignal;
  flow: FlowFacts;
}
