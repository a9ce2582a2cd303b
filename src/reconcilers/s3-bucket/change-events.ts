/**
 * How buckets are named in AWS change events: CloudTrail's S3 management events
 * (PutBucketTagging, PutBucketPolicy, PutBucketEncryption, PutBucketLifecycle,
 * PutBucketPublicAccessBlock, PutBucketVersioning, DeleteBucket, …) carry
 * `requestParameters.bucketName`.
 */
import type { ChangeEventNaming } from "../../change-events/naming.ts";
import { stringIn } from "../../change-events/naming.ts";
import type { S3BucketObject } from "./model.ts";

/** The S3Bucket kind's naming table. */
export const s3BucketChangeEvents: ChangeEventNaming<S3BucketObject> = {
  eventSource: "s3.amazonaws.com",
  namesInRequest: (p) => stringIn(p.bucketName),
  namesOf: (b) => stringIn(b.spec.bucketName),
  regionOf: (b) => b.spec.region,
};
