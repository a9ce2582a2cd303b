/**
 * Identity of the `compute.cloud.com/v1` API group, and the names the operator writes into objects
 * and AWS resources. These strings are part of the public contract: changing one orphans existing
 * resources.
 */

/** The API group of every kind in this package. */
export const GROUP = "compute.cloud.com";

/** The only version of the group; served and stored. */
export const VERSION = "v1";

/** `apiVersion` of every object in this package. */
export const API_VERSION = `${GROUP}/${VERSION}` as const;

/** The finalizer the reconcilers add before creating anything in AWS. */
export const FINALIZER = `${GROUP}/finalizer`;

/**
 * The annotation that pauses an object: with the value `"true"` the operator makes no AWS call
 * for it and changes none of its finalizers (a deletion waits) until the annotation is removed
 * or set to anything else.
 */
export const PAUSED_ANNOTATION = `${GROUP}/paused`;

/**
 * The annotation that sets an object's own steady poll period: a duration as `--poll-interval`
 * takes it ("30s", "10m", "1h30m"), within the bounds docs/api.md states; every other value is
 * reported and the operator's poll interval applies.
 */
export const POLL_INTERVAL_ANNOTATION = `${GROUP}/poll-interval`;

/**
 * The annotation that asks for one reconcile now: a value other than the object's
 * `status.lastHandledReconcileAt` (conventionally the time of the request) is handled once and
 * echoed there.
 */
export const RECONCILE_REQUESTED_AT_ANNOTATION = `${GROUP}/reconcile-requested-at`;

/**
 * The annotation that approves the plan an object holds under `spec.changePolicy: Approve`: its
 * value is the plan's hash (`status.pendingChanges.hash`).
 */
export const APPROVED_CHANGES_ANNOTATION = `${GROUP}/approved-changes`;

/** `kubectl get aws` and `kubectl get kubeprovisioner` list every kind of the group. */
export const CATEGORIES = ["aws", "kubeprovisioner"] as const;

/**
 * Tag keys starting with this prefix are reserved for the operator's ownership tags; admission
 * rejects them in `spec.tags` so a user cannot forge or remove ownership.
 */
export const RESERVED_TAG_PREFIX = `${GROUP}/`;

/**
 * Ownership tags the operator puts on every AWS resource it creates. Each value fits the AWS tag
 * value limit (256): a UID is 36 characters, a namespace at most 63, a name at most 253.
 */
export const OWNERSHIP_TAGS = {
  /** metadata.uid of the owning object. */
  uid: `${RESERVED_TAG_PREFIX}uid`,
  /** metadata.namespace of the owning object. */
  namespace: `${RESERVED_TAG_PREFIX}namespace`,
  /** metadata.name of the owning object. */
  name: `${RESERVED_TAG_PREFIX}name`,
  /** Kind of the owning object (Ec2Instance, S3Bucket, SqsQueue). */
  kind: `${RESERVED_TAG_PREFIX}kind`,
  /** Always {@link MANAGED_BY_VALUE}. */
  managedBy: `${RESERVED_TAG_PREFIX}managed-by`,
} as const;

/** Value of the `managed-by` ownership tag. */
export const MANAGED_BY_VALUE = "kubeprovisioner";

/**
 * Label on every ConfigMap the operator writes for `spec.writeOutputsTo`, with the value
 * {@link MANAGED_BY_VALUE}: the operator's ConfigMap cache lists and watches only these.
 */
export const MANAGED_BY_LABEL = `${GROUP}/managed-by`;
