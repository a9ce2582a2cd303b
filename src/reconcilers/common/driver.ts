/**
 * The contract between the shared reconcile flow ({@link ManagedResourceReconciler}) and the code
 * that knows one AWS resource type. The flow owns Kubernetes: the cache read, the finalizer, the
 * idempotency token, conditions, Events, status writes and requeue timing. A driver owns AWS:
 * find the resource, create it with the token, repair drift, delete it, and describe what it saw.
 * A driver never writes to Kubernetes and never waits for AWS to settle (the flow polls).
 */
import type { Condition } from "../../api/v1/index.ts";
import type { KubeObject } from "../../runtime/kube/object.ts";
import type { Logger } from "../../runtime/logging.ts";
import type { Verdict } from "./ownership.ts";

/** Spec fields every managed kind shares. */
export interface ManagedSpec {
  region: string;
  tags?: Record<string, string> | undefined;
  deletionPolicy: "Delete" | "Retain";
  adoptExisting: boolean;
  onDeletedOutOfBand: "Recreate" | "Report";
}

/** Status fields every managed kind shares. */
export interface ManagedStatus {
  observedGeneration?: number | undefined;
  conditions?: Condition[] | undefined;
  createToken?: string | undefined;
  createAttempt?: number | undefined;
  createRequestedAt?: string | undefined;
  state?: string | undefined;
}

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
 * claim the flow's adoption rules judge.
 */
export type Observation<R> = { exists: false } | ({ exists: true; resource: R } & Verdict);

/** Per-call context of a driver. */
export interface DriverContext {
  logger: Logger;
  signal: AbortSignal;
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
 * One repaired drift, as {@link ResourceDriver.sync} reports it: the spec setting that was put
 * back (the `setting` label of `kubeprovisioner_drift_repairs_total`, so one of the driver's
 * {@link ResourceDriver.driftSettings}) and a short description for the `Updated` Event.
 */
export interface DriftRepair {
  readonly setting: string;
  readonly description: string;
}

/** The setting name of the `tags` map, which every kind repairs. */
export const TAGS_SETTING = "tags";

/** Result of {@link ResourceDriver.delete}. */
export type DeleteOutcome =
  /**
   * Nothing of ours is left in AWS: the finalizer may go. `leftInPlace` says why a resource that
   * exists was not deleted (it is not owned by this object); it becomes the released Event.
   */
  | { done: true; leftInPlace?: string }
  /** Deletion is under way (EC2 shutting-down): poll again soon. `state` goes into status. */
  | { done: false; state?: string; message: string };

/**
 * Deletion cannot proceed until a human acts (a non-empty bucket). The flow reports `reason` in
 * the Ready condition and a Warning Event, keeps the finalizer, and retries with backoff.
 */
export class DeletionBlockedError extends Error {
  override readonly name = "DeletionBlockedError";
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
export class DependencyNotReadyError extends Error {
  override readonly name = "DependencyNotReadyError";
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * The spec asks for something that can never work as written (caught after admission, e.g. a
 * zone outside the region that only AWS can judge). Terminal until the spec changes.
 */
export class InvalidSpecError extends Error {
  override readonly name = "InvalidSpecError";
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * Knows one AWS resource type. `T` is the object, `R` the driver's view of the AWS resource.
 * Every method may throw the AWS layer's `AwsError`; the flow classifies it.
 */
export interface ResourceDriver<T extends ManagedObject, R> {
  /** What the resource is called in messages: "instance", "bucket", "queue". */
  readonly noun: string;
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
   * Every setting {@link sync} may repair, named as in the spec (`tags`, `versioning`, ...):
   * the complete, fixed value set of the drift metric's `setting` label for this kind.
   */
  readonly driftSettings: readonly string[];
  /**
   * The AWS identifier the status records for the resource (instance ID, bucket ARN, queue URL),
   * or undefined when none is recorded. A recorded ID with no resource in AWS means the resource
   * was deleted out of band.
   */
  recordedId(obj: T): string | undefined;
  /**
   * Finds the resource: by the recorded ID first, then by ownership tag (EC2) or by name (S3,
   * SQS), and judges it with {@link verdictOf} from its tags (never from status). A resource that
   * no longer counts as existing (an EC2 instance in `terminated`) is reported as absent.
   */
  observe(obj: T, ctx: DriverContext): Promise<Observation<R>>;
  /**
   * Creates the resource with idempotency token `token` and the ownership tags, and returns it.
   * Only called after {@link observe} found nothing and after `token` was recorded in status.
   */
  create(obj: T, token: string, ctx: DriverContext): Promise<R>;
  /** Writes this object's ownership tags onto a foreign resource the object adopts. */
  adopt(obj: T, resource: R, ctx: DriverContext): Promise<R>;
  /**
   * Repairs drift of mutable attributes (tags, versioning, queue attributes). Returns the
   * resource as it is now and each change made (empty when in sync: the second reconcile of an
   * unchanged object makes no mutating call).
   */
  sync(obj: T, resource: R, ctx: DriverContext): Promise<{ resource: R; changes: DriftRepair[] }>;
  /** Kind-specific status fields describing the resource (including `state`). */
  status(obj: T, resource: R): Partial<NonNullable<T["status"]>>;
  /** Kind-specific status fields to clear when the resource is gone (its ID, addresses). */
  clearedStatus(): Partial<NonNullable<T["status"]>>;
  /** Readiness of the resource for the Ready condition and the poll interval. */
  readiness(resource: R): Readiness;
  /**
   * Deletes the resource if it exists and carries this object's UID tag (never a foreign one:
   * nothing is deleted, emptied or untagged for an object that does not own it). May be
   * called repeatedly until it reports done; must not block until AWS finishes.
   * @throws DeletionBlockedError when deletion needs a human (non-empty bucket).
   */
  delete(obj: T, ctx: DriverContext): Promise<DeleteOutcome>;
}
