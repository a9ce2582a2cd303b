/**
 * The one exception to "a resource is an object's own only with its UID tag": an S3 bucket that
 * this object's current create made moments before the operator stopped, before the separate
 * PutBucketTagging call. (S3 accepts tags on CreateBucket, but not every S3 implementation applies
 * them, and the tag write must stay the proof.) An untagged bucket counts as the object's own only
 * when every piece of evidence agrees, and the evidence a tenant can write (status) can only narrow
 * the window, never move it before the object existed:
 *
 * - the flow holds the token of the object's current create attempt (FlowFacts.create: a token
 *   that is not the one the UID and attempt give is none) and the object has not yet recorded a
 *   bucket for it (`status.bucketArn` unset): once it has seen its bucket tagged as its own, an
 *   untagged bucket of that name is foreign;
 * - the bucket's creation date (ListBuckets) lies in the create's window: no earlier than both the
 *   object's server-set creationTimestamp and the time the token was recorded, and no later than
 *   {@link CREATE_WINDOW_MS} after that time, which itself may not lie in the future.
 *
 * A bucket that existed before the object, or before its current create, is therefore never
 * taken for its own. Pure functions; the driver makes the ListBuckets call.
 */
import type { FlowFacts } from "../common/driver.ts";
import { CREATE_WINDOW_MS } from "../common/token.ts";
import type { S3BucketObject } from "./model.ts";

/**
 * Tolerated clock difference between the API server or the operator and S3, in ms. Creation
 * dates are whole seconds, so the lower bound is also rounded down to a second first.
 */
export const CLOCK_SKEW_MS = 1000;

/** The window in which the object's current create may have made its bucket, or undefined when none is open. */
export function createWindow(
  obj: S3BucketObject,
  flow: Pick<FlowFacts, "create">,
  now: number,
): { from: number; to: number } | undefined {
  if (obj.status?.bucketArn !== undefined) return undefined;
  const requested = flow.create?.requestedAt;
  const created = Date.parse(obj.metadata.creationTimestamp ?? "");
  if (requested === undefined || !Number.isFinite(created)) return undefined;
  if (requested > now + CLOCK_SKEW_MS) return undefined;
  const from = Math.floor(Math.max(requested, created) / 1000) * 1000 - CLOCK_SKEW_MS;
  return { from, to: requested + CREATE_WINDOW_MS };
}

/** Whether a bucket created at `creationDate` can be the one the object's current create made. */
export function createdInWindow(
  obj: S3BucketObject,
  flow: Pick<FlowFacts, "create">,
  creationDate: Date | undefined,
  now: number,
): boolean {
  const window = createWindow(obj, flow, now);
  if (window === undefined || creationDate === undefined) return false;
  const t = creationDate.getTime();
  return Number.isFinite(t) && t >= window.from && t <= window.to;
}
