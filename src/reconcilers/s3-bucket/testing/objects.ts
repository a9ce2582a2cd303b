/** S3Bucket objects for the unit tests of this folder. */
import type { S3BucketObject } from "../model.ts";

/**
 * An S3Bucket `team/assets` (UID `uid-1`) for bucket `assets-1` in eu-west-1, with `over` merged
 * into its spec, `status` as given and `metadata` merged into its metadata.
 */
export function bucketObject(
  over: Partial<S3BucketObject["spec"]> = {},
  status?: S3BucketObject["status"],
  metadata: Partial<S3BucketObject["metadata"]> = {},
): S3BucketObject {
  return {
    apiVersion: "compute.cloud.com/v1",
    kind: "S3Bucket",
    metadata: { namespace: "team", name: "assets", uid: "uid-1", ...metadata },
    spec: {
      bucketName: "assets-1",
      region: "eu-west-1",
      versioning: false,
      forceDelete: false,
      managementPolicy: "Full",
      driftPolicy: "Repair",
      changePolicy: "Auto",
      deletionPolicy: "Delete",
      adoptExisting: false,
      onDeletedOutOfBand: "Recreate",
      ...over,
    },
    ...(status !== undefined ? { status } : {}),
  };
}
