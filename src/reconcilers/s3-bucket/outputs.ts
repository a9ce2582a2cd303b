/**
 * The values an S3Bucket writes into the ConfigMap of `spec.writeOutputsTo`.
 */
import type { S3_BUCKET_OUTPUT_KEYS, S3Bucket } from "../../api/v1/index.ts";

/** The output values of a bucket, by key; a value not known yet is undefined. */
export function s3BucketOutputs(
  b: Pick<S3Bucket, "spec" | "status">,
): Record<(typeof S3_BUCKET_OUTPUT_KEYS)[number][0], string | undefined> {
  return {
    BUCKET_NAME: b.spec.bucketName,
    BUCKET_ARN: b.status?.bucketArn,
    // The region S3 reports for the bucket, which is where requests must go.
    BUCKET_REGION: b.status?.region ?? b.spec.region,
    BUCKET_ENDPOINT: b.status?.endpoint,
  };
}
