/**
 * The contract between the shared reconcile flow ({@link ManagedResourceReconciler}) and the code
 * that knows one AWS resource type, in the shape of crossplane-runtime's ExternalClient: observe,
 * create, update, delete, plus one pure projection (describe). The flow owns Kubernetes: the cache
 * read, the finalizer, the idempotency token, the ownership rules and adoption, conditions,
 * Events, status writes and requeue timing. A driver owns AWS: find the resource and judge its
 * tags, create it with the token, repair drift, delete what is this object's, and describe what
 * it saw. A driver never writes to Kubernetes, never reads the flow's conditions (what it needs to
 * know about the flow arrives in {@link DriverContext.flow}) and never waits for AWS to settle.
 */
import type { ManagedSpec, ManagedStatus } from "../../api/v1/common.ts";
import type { AwsClientSource } from "../../aws/clients.ts";
import type { KubeObject } from "../../runtime/kube/object.ts";
import type { Logger } from "../../runtime/logging.ts";
import type { AccountAdoptionPolicy, Verdict } from "./ownership.ts";

/** Spec and status fields every managed kind shares, derived from the API schema (src/api/v1/common.ts). */
export type { ManagedSpec, ManagedStatus };

/** An object of one of the managed kinds. */
export interface ManagedObject extends KubeObject {
  apiVersion: string;
  kind: string;
  spec: ManagedSpec;
  status?: ManagedStatus;
}

/**
 * What {@link ResourceDriver.observe} found: nothing, or the resource with the shared ownership
 * verdict ({@link verdictOf}): `owned` (it carries this object's UID tag) or `foreign` with the
 * claim the flow's adoption rules judge. `appearing` on an absent observation: nothing is listed
 * yet, but a resource this object created moments ago may still appear (eventual consistency);
 * the flow neither creates nor finishes a deletion meanwhile.
 */
export type Observation<R> =
  { exists: false; appearing?: string } | ({ exists: true; resource: R } & Verdict);

/** What the flow knows about the object that a driver may need; derived by the flow alone. */
export interface FlowFacts {
  /** The object is being deleted: the observation serves {@link ResourceDriver.delete}. */
  readonly deleting: boolean;
  /**
   * The object is in steady state by its own record: a resource is recorded, it is not being
   * deleted, and Ready is True for the current generation.
   */
  readonly settled: boolean;
  /** The create attempt the flow recorded (its token, attempt and time), if any. */
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

/**
 * The identifier recorded in `obj.status[idField]` (see {@link ResourceDriver.idField}), or
 * undefined when none (or an empty one) is.
 */
export function recordedIdOf(obj: ManagedObject, idField: string): string | undefined {
  const v = (obj.status as Record<string, unknown> | undefined)?.[idField];
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** Per-call context of a driver. */
export interface DriverContext {
  logger: Logger;
  signal: AbortSignal;
  flow: FlowFacts;
}

/**
 * The AWS account of one object, as resolved for one reconcile. A driver never sees it: it is
 * built with the account's clients (./flow/connector.ts).
 */
export interface ObjectAccount {
  /** The AwsAccount's name; undefined for the operator's own credentials. */
  readonly name: string | undefined;
  /** The AWS account ID, when known. */
  readonly accountId: string | undefined;
  /** The clients of that account (the same object for every reconcile of the same account). */
  readonly aws: AwsClientSource;
  /** The AwsAccount's spec.adoption (../ownership.ts, adoptionGrant); undefined for the operator's own. */
  readonly adoption?: AccountAdoptionPolicy | undefined;
}

/** How the resource looks from the outside, for the Ready condition and polling. */
export interface Readiness {
  /** The resource is usable: Ready=True. */
  ready: boolean;
  /**
   * The resource is changing state on its own (EC2 pending, stopping): poll again soon with a
   * short backoff instead of the steady-state poll period.
   */
  pending: boolean;
  /** CamelCase reason for the Ready condition (Available, Pending, Stopped, ...). */
  reason: string;
  /** Stable human-readable message (no timestamps, no request IDs). */
  message: string;
}

/**
 * One repaired drift, as {@link ResourceDriver.update} reports it: the spec setting that was put
 * back (the `setting` label of `kubeprovisioner_drift_repairs_total`, so one of the driver's
 * {@link ResourceDriver.driftSettings}) and a short description for the `Updated` Event.
 */
export interface DriftRepair {
  readonly setting: string;
  readonly description: string;
  /**
   * The drift was found and left as it is, because the setting is not changed in place (an EC2
   * volume's size or KMS key). The flow reports it (Synced=False, reason DriftNotRepaired, a
   * Warning Event and the drift reports metric when the report is new) instead of an `Updated`
   * Event; `setting` is then one of the driver's {@link ResourceDriver.reportedSettings}.
   */
  readonly reportOnly?: boolean;
}

/** Drift of `setting` that is reported, not repaired (see {@link DriftRepair.reportOnly}). */
export function driftReported(setting: string, description: string): DriftRepair {
  return { setting, description, reportOnly: true };
}

/** The setting name of the `tags` map, which every kind repairs. */
export const TAGS_SETTING = "tags";

/**
 * What {@link ResourceDriver.describe} says about a resource. `status` holds every kind-specific
 * status field (its identifier under {@link ResourceDriver.idField}, and `state`), absent values
 * as undefined: once the resource is gone the flow clears exactly the fields outside its own.
 */
export interface Description<S> {
  readonly status: Partial<S>;
  readonly readiness: Readiness;
}

/** What {@link ResourceDriver.observed} says about a resource, for an observe-only object. */
export interface ObservedDetails<S> {
  /** Every tag the resource carries (`status.observedTags`). */
  readonly tags: Readonly<Record<string, string>>;
  /** The kind's own observe-only status fields (see {@link ResourceDriver.observedFields}). */
  readonly status?: Partial<S>;
}

/** Result of {@link ResourceDriver.delete}. */
export type DeleteOutcome =
  /**
   * Nothing of ours is left in AWS: the finalizer may go. `leftInPlace` says why a resource that
   * exists was not deleted (it is not owned by this object); it becomes the released Event.
   */
  | { done: true; leftInPlace?: string }
  /** Deletion is under way (EC2 shutting-down): poll again soon. `state` goes into status. */
  | { done: false; blocked?: false; state?: string; message: string }
  /**
   * Deletion cannot proceed until a human acts (a non-empty bucket). The flow reports `reason` in
   * the Ready condition and a Warning Event, keeps the finalizer, and looks again with backoff.
   */
  | { done: false; blocked: true; reason: string; message: string };

/** The outcome of a deletion blocked for `reason` until a human acts. */
export function blocked(reason: string, message: string): DeleteOutcome {
  return { done: false, blocked: true, reason, message };
}

/** A driver failure the flow reports on the object under a CamelCase condition `reason`. */
abstract class ReasonedError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * The object depends on another object that is not ready yet (a dead-letter queue that has no
 * ARN yet). The flow reports `reason` on Ready and Synced, emits no Warning, and waits: a change
 * of the other object enqueues this one again (the kind's controller watches it), and the steady
 * poll is the fallback.
 */
export class DependencyNotReadyError extends ReasonedError {
  override readonly name = "DependencyNotReadyError";
}

/**
 * Something the object needs is not usable yet (the AwsAccount it uses cannot assume its role).
 * The flow reports `reason` on Synced at once (Ready is left as it is) and retries with the
 * controller's backoff.
 */
export class NotReadyRetryError extends ReasonedError {
  override readonly name = "NotReadyRetryError";
}

/**
 * A failure reported on the object and not retried until the spec changes: the spec asks for
 * something that can never work as written (a zone outside the region, a bucket name another
 * account owns), or the ownership rules refuse the object the resource it found. The flow sets
 * Synced=False (and Ready=False unless a resource is recorded and still the object's) with
 * `reason`, emits one Warning Event and ends the reconcile in a TerminalError. `notReady`: the
 * object has no usable resource, so Ready turns False even when one is recorded.
 */
export class InvalidSpecError extends ReasonedError {
  override readonly name = "InvalidSpecError";
  readonly notReady: boolean;
  constructor(reason: string, message: string, opts: { notReady?: boolean } = {}) {
    super(reason, message);
    this.notReady = opts.notReady ?? false;
  }
}

/**
 * Knows one AWS resource type. `T` is the object, `R` the driver's view of the AWS resource.
 * Every method may throw the AWS layer's `AwsError` (the flow classifies it) or an
 * {@link InvalidSpecError}.
 */
export interface ResourceDriver<T extends ManagedObject, R> {
  /** What the resource is called in messages: "instance", "bucket", "queue". */
  readonly noun: string;
  /**
   * The status field holding the resource's AWS identifier (instance ID, bucket ARN, queue URL).
   * A recorded identifier with no resource in AWS means the resource was deleted out of band.
   */
  readonly idField: keyof NonNullable<T["status"]> & string;
  /**
   * Put the steady-state polls of every object on one grid (the multiples of the poll period),
   * so that observations the driver batches (EC2 DescribeInstances) arrive together and share
   * calls. Without it each object polls one period after its own last reconcile, which spreads
   * polls over the period and leaves nothing to batch. The first aligned poll comes between half
   * a period and one and a half periods after the reconcile; every later one exactly a period
   * apart. Polls of resources in transition are never aligned. @default false
   */
  readonly alignPolls?: boolean;
  /**
   * Every setting {@link update} may repair, named as in the spec (`tags`, `versioning`, ...):
   * the complete, fixed value set of the drift metric's `setting` label for this kind.
   */
  readonly driftSettings: readonly string[];
  /**
   * Every setting whose drift {@link update} may report without repairing it
   * ({@link DriftRepair.reportOnly}): the fixed `setting` label values of
   * `kubeprovisioner_drift_reports_total` for this kind. @default none
   */
  readonly reportedSettings?: readonly string[];
  /**
   * Finds the resource: by the recorded ID first, then by ownership tag (EC2) or by name (S3,
   * SQS), and judges it with {@link verdictOf} from its tags (never from status). A resource that
   * no longer counts as existing (an EC2 instance in `terminated`) is reported as absent. Called
   * before every create, update and delete, and alone on every poll of an observe-only object
   * (`spec.managementPolicy: ObserveOnly`), whose resource a spec identifier may name (EC2
   * `spec.instanceId`).
   */
  observe(obj: T, ctx: DriverContext): Promise<Observation<R>>;
  /**
   * Creates the resource with idempotency token `token` and the ownership tags, and returns it.
   * Only called after {@link observe} found nothing and after `token` was recorded in status.
   */
  create(obj: T, token: string, ctx: DriverContext): Promise<R>;
  /**
   * Brings the observed resource in line with the spec: tags (the desired set, ownership tags
   * included, through ./tags.ts), versioning, queue attributes. Called for a resource that is
   * the object's own, and for a foreign one once the ownership rules let the object adopt it:
   * writing the desired tags is what adopts it. Returns each change made (empty when in sync: the
   * second reconcile of an unchanged object makes no mutating call), and each drift left as it is
   * and reported ({@link DriftRepair.reportOnly}).
   */
  update(obj: T, observed: Observation<R> & { exists: true }, ctx: DriverContext): Promise<DriftRepair[]>;
  /**
   * Deletes what of the observed resource is this object's (never a foreign one: nothing is
   * deleted, emptied or untagged for an object that does not own it). May be called repeatedly
   * until it reports done; must not block until AWS finishes. Reports done, in progress, or
   * blocked when deletion needs a human (a non-empty bucket).
   */
  delete(obj: T, observed: Observation<R>, ctx: DriverContext): Promise<DeleteOutcome>;
  /**
   * The kind-specific status fields and the readiness of a resource; pure. `obj` is the object
   * the resource was observed for, for a readiness that depends on the spec (an EC2 instance
   * that is stopped is ready when the spec asks for it stopped).
   */
  describe(resource: R, obj: T): Description<NonNullable<T["status"]>>;
  /**
   * What an observe-only object reports of the resource beyond {@link describe}; pure. Managed
   * objects do not carry these fields (they would go stale after each repair).
   */
  observed(resource: R): ObservedDetails<NonNullable<T["status"]>>;
  /** The status fields {@link observed} may set beside the tags. @default none */
  readonly observedFields?: readonly (keyof NonNullable<T["status"]> & string)[];
}
