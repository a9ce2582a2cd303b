/**
 * References between objects of one namespace (a dead-letter queueRef, a redrive source's
 * queueRef, a notification queueRef, a bucketRef): the cache index key of the object referred to,
 * the objects that refer to a changed object, found through such an index, as the keys to
 * enqueue, the object a reference names (or why it cannot be had yet), whether the object
 * referred to is usable as its current spec says, and which statements of a policy a grant
 * would collide with.
 */
import { ConditionType, isConditionTrue, type Condition } from "../../api/v1/index.ts";
import type { MapFunc } from "../../runtime/controller/index.ts";
import type { Request } from "../../runtime/controller/reconciler.ts";
import type { KubeObject, ResourceType } from "../../runtime/kube/object.ts";
import { DependencyNotReadyError, InvalidSpecError } from "./driver.ts";
import { Reason } from "./reasons.ts";

/** The index key of the object `name` in `namespace`: `namespace/name`. */
export function referenceKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}/${name}`;
}

/**
 * The keys of the objects that refer to `changed`, found through `byIndex` (an index whose
 * values are {@link referenceKey}s): one lookup, whatever the number of objects in the namespace.
 */
export function referrers(
  byIndex: (key: string) => readonly Readonly<KubeObject>[],
  changed: KubeObject,
): Request[] {
  return byIndex(referenceKey(changed.metadata.namespace, changed.metadata.name ?? "")).map((o) => ({
    namespace: o.metadata.namespace ?? "",
    name: o.metadata.name ?? "",
  }));
}

/**
 * The map function of a kind's watch (KindWatch.map): a changed object enqueues the objects of
 * `resource` that name it, found through their cache index `index`.
 */
export function referrersIn(
  deps: {
    readonly client: {
      resource(r: ResourceType): { byIndex(index: string, key: string): readonly Readonly<KubeObject>[] };
    };
  },
  resource: ResourceType,
  index: string,
): MapFunc<KubeObject> {
  const objects = deps.client.resource(resource);
  return (changed) => referrers((key) => objects.byIndex(index, key), changed);
}

/**
 * The error of a reference (`field`) to the object `name` of `kind`, whose controller the operator
 * does not run (`--controllers`, the chart's `controllers.<kind>.enabled`): that object is never
 * made Ready, so the referrer waits with reason `ReferencedKindNotRunning` until the operator is
 * restarted with the kind, or the reference is replaced by `instead`.
 */
export function referencedKindNotRunning(
  field: string,
  kind: string,
  name: string,
  instead: string,
): DependencyNotReadyError {
  return new DependencyNotReadyError(
    Reason.ReferencedKindNotRunning,
    `${field}: names the ${kind} ${name}, but this operator does not run the ${kind} controller ` +
      `(--controllers; the chart's controllers.${kind.charAt(0).toLowerCase()}${kind.slice(1)}.enabled), ` +
      `so that object is never made Ready: run that controller, or ${instead}`,
  );
}

/**
 * The object a reference field names in the referring object's namespace, from the cache through
 * `ref.lookup`: every reference of every kind is resolved through here, so each reports a missing
 * object, and a reference to the referrer itself, the same way. What the object must be beyond
 * existing (its type, region, readiness) is the caller's to check.
 * @throws InvalidSpecError with `ref.itself.reason` when the reference names the referrer itself
 * (only for references that may not: `ref.itself` set).
 * @throws DependencyNotReadyError with reason `ref.missing` while the object does not exist; the
 * message is `<ref.what> does not exist in namespace <namespace>`.
 */
export function referencedObject<T>(ref: {
  /** The object as the messages name it, e.g. `the dead-letter queue jobs-dlq`. */
  readonly what: string;
  readonly name: string;
  readonly referrer: { readonly metadata: { readonly namespace?: string; readonly name?: string } };
  readonly lookup: (ref: { namespace: string; name: string }) => T | undefined;
  readonly missing: string;
  readonly itself?: { readonly reason: string; readonly message: string } | undefined;
}): T {
  const namespace = ref.referrer.metadata.namespace ?? "";
  if (ref.itself !== undefined && ref.name === ref.referrer.metadata.name)
    throw new InvalidSpecError(ref.itself.reason, ref.itself.message);
  const found = ref.lookup({ namespace, name: ref.name });
  if (found === undefined)
    throw new DependencyNotReadyError(ref.missing, `${ref.what} does not exist in namespace ${namespace}`);
  return found;
}

/**
 * Whether `o` is Ready and Synced with its current spec reconciled (status.observedGeneration
 * caught up with metadata.generation): what it grants or sets by that spec is in place in AWS.
 */
export function readyAsSpecified(o: {
  readonly metadata: { readonly generation?: number | undefined };
  readonly status?:
    | {
        readonly observedGeneration?: number | undefined;
        readonly conditions?: readonly Condition[] | undefined;
      }
    | undefined;
}): boolean {
  const conditions = o.status?.conditions;
  return (
    (o.status?.observedGeneration ?? -1) >= (o.metadata.generation ?? 0) &&
    isConditionTrue(conditions, ConditionType.Ready) &&
    isConditionTrue(conditions, ConditionType.Synced)
  );
}

/** The Sids of the statements of `policy` that are also among `sids` (the Sids a grant manages). */
export function conflictingSids(
  policy: { readonly Statement: readonly object[] } | undefined,
  sids: readonly string[],
): string[] {
  const taken = new Set(sids);
  return (policy?.Statement ?? []).flatMap((st) => {
    const sid = (st as { Sid?: unknown }).Sid;
    return typeof sid === "string" && taken.has(sid) ? [sid] : [];
  });
}

/** A bucket a policy grant names, by bucketRef: its name and ARN. */
export interface GrantedBucket {
  readonly bucketName: string;
  readonly bucketArn: string;
}

/**
 * The buckets a grant field (`allowLoggingFrom`, `allowS3Notifications`) names by bucketRef,
 * from the cache through `lookup`: each must exist as an S3Bucket in `namespace`, and the Sid the
 * grant writes for it (`sidOf`) must not be one of `policy`'s own statements.
 * @throws DependencyNotReadyError with reason `missing` while a named S3Bucket does not exist.
 * @throws InvalidSpecError (PolicyStatementConflict) when `policy` uses one of those Sids.
 */
export function grantedBuckets(grant: {
  readonly field: string;
  readonly refs: readonly { readonly bucketRef: { readonly name: string } }[];
  readonly namespace: string;
  readonly lookup: (ref: {
    namespace: string;
    name: string;
  }) => { readonly spec: { readonly bucketName: string; readonly region: string } } | undefined;
  readonly arnOf: (bucketName: string, region: string) => string;
  readonly missing: string;
  readonly sidOf: (bucketName: string) => string;
  readonly policy: { readonly Statement: readonly object[] } | undefined;
}): GrantedBucket[] {
  const { field, namespace } = grant;
  const buckets = grant.refs.map(({ bucketRef: { name } }) => {
    const bucket = referencedObject({
      what: `${field}: the S3Bucket ${name}`,
      name,
      referrer: { metadata: { namespace } },
      lookup: grant.lookup,
      missing: grant.missing,
    });
    const bucketName = bucket.spec.bucketName;
    return { bucketName, bucketArn: grant.arnOf(bucketName, bucket.spec.region) };
  });
  const conflicts = conflictingSids(
    grant.policy,
    buckets.map((b) => grant.sidOf(b.bucketName)),
  );
  if (conflicts.length > 0)
    throw new InvalidSpecError(
      Reason.PolicyStatementConflict,
      `spec.policy has the statement Sid ${conflicts.join(", ")}, which ${field} manages: ` +
        `remove that statement from spec.policy or the bucket from ${field}`,
    );
  return buckets;
}
