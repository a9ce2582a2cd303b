/**
 * The S3Bucket controller: the shared managed-resource flow with the S3 bucket driver.
 */
import { S3BucketResource } from "../../api/v1/index.ts";
import type { Controller } from "../../runtime/controller/index.ts";
import { setupManagedController, type ReconcilerDeps } from "../common/setup.ts";
import type { ObservedBucket, S3BucketObject } from "./bucket.ts";
import { S3BucketDriver } from "./driver.ts";

export { S3BucketDriver, S3BucketReason, type S3BucketDriverOptions } from "./driver.ts";
export type { ObservedBucket, S3BucketObject } from "./bucket.ts";

/** Adds the `s3bucket` controller to `deps.manager` and returns it. */
export function setupS3BucketController(deps: ReconcilerDeps): Controller {
  return setupManagedController<S3BucketObject, ObservedBucket>(
    "s3bucket",
    S3BucketResource,
    new S3BucketDriver({ aws: deps.aws }),
    deps,
  );
}
