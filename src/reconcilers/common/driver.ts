/**
 * The contract between the shared reconcile flow ({@link ManagedResourceReconciler}) and the code
 * that knows one AWS resource type, in the shape of crossplane-runtime's ExternalClient: observe,
 * create, plan (what differs, as data: ./changes.ts), delete, plus one pure projection (describe).
 * The flow owns Kubernetes: the cache read, the finalizer, the idempotency token, the ownership
 * rules and adoption, conditions, Events, status writes and requeue timing, and what is done with
 * a change set (applied, reported or held for approval). A driver owns AWS: find the resource and
 * judge its tags, create it with the token, say what differs from the spec and how each group of
 * changes is applied, delete what is this object's, and describe what it saw. A driver never writes to Kubernetes, never reads the flow's conditions (what it needs to
 * know about the flow arrives in {@link DriverContext.flow}) and never waits for AWS to settle.
 */
import type { AwsClientSource } from "../../aws/clients.ts";
import type { ChangeSet } from "./changes.ts";
import type { DriverContext } from "./driver-context.ts";
import type { ManagedObject } from "./managed-object.ts";
import type { AccountAdoptionPolicy, Verdict } from "./ownership.ts";

export type { ManagedSpec, ManagedStatus, ManagedObject } from "./managed-object.ts";
export { recordedIdOf } from "./managed-object.ts";
export type { DriverContext, FlowFacts, RecordedCreate } from "./driver-context.ts";

/**
 * What {@link ResourceDriver.observe} found: nothing, or the resource with the shared ownership
 * verdict ({@link verdictOf}): `owned` (it carries this object's UID tag) or `foreign` with the
 * claim the flow's adoption rules judge. `appearing` on an absent observation: nothing is listed
 * yet, but a resource this object created moments ago may still appear (eventual consistency);
 * the flow neither creates nor finishes a deletion meanwhile.
 */
export type Observation<R> =
  { exists: false; appearing?: string } | ({ exists: true; resource: R } & Verdict);

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
 * ARN yet), thrown when the kind resolves the object's references. The flow reports `reason` on
 * Ready and Synced, emits no Warning, and waits: a change of the other object enqueues this one
 * again (the kind's controller watches it), and the steady poll is the fallback.
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
 * Knows one AWS resource type. `T` is the object, `R` the driver's view of the AWS resource, `Ref`
 * what the object's references to other objects resolve to (the ARN of a dead-letter queue); the
 * kind resolves them from the shared cache, a step of the flow's own before {@link observe}
 * (KindDefinition.references, ./kind.ts), and hands them to {@link create}, {@link plan} and
 * {@link createActions}: a driver never looks another object up. What is fixed about the kind (its
 * noun, the status field of its identifier, its settings) is not the driver's but the kind's,
 * declared as data: {@link KindTraits} (./kind-traits.ts).
 * Every method may throw the AWS layer's `AwsError` (the flow classifies it) or an
 * {@link InvalidSpecError}.
 */
export interface ResourceDriver<T extends ManagedObject, R, Ref = undefined> {
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
   * Only called after {@link observe} found nothing and after `token` was recorded in status;
   * `refs`: the object's references, resolved in this reconcile.
   */
  create(obj: T, token: string, ctx: DriverContext, refs: Ref): Promise<R>;
  /**
   * What differs between the observed resource and the spec, as a change set (./changes.ts):
   * tags (the desired set, ownership tags included, through ./tags.ts), versioning, queue
   * attributes, an instance's type. Never writes to AWS (it may read more than {@link observe}
   * did, such as an instance's user data). Called for a resource that is the object's own, and
   * for a foreign one once the ownership rules let the object adopt it: applying the tag changes
   * is what adopts it. Empty when in sync: the flow then makes no mutating call. A difference the
   * operator does not apply is a `refused` change with its reason. `refs`: the object's
   * references, resolved in this reconcile.
   */
  plan(
    obj: T,
    observed: Observation<R> & { exists: true },
    ctx: DriverContext,
    refs: Ref,
  ): Promise<ChangeSet>;
  /**
   * The IAM actions {@link create} calls for `obj` with references `refs`, in call order, for a
   * plan of an object whose resource does not exist yet; pure.
   */
  createActions(obj: T, refs: Ref): readonly string[];
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
}
