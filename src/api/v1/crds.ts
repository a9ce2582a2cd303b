/**
 * The CRDs of the group, in a fixed order.
 */
import type { CustomResourceDefinition } from "../schema/crd.ts";
import { ec2InstanceCrd } from "./ec2-instance.ts";
import { s3BucketCrd } from "./s3-bucket.ts";
import { sqsQueueCrd } from "./sqs-queue.ts";

/** Every CRD of `compute.cloud.com/v1`: Ec2Instance, S3Bucket, SqsQueue. Freshly built per call. */
export function crdsOfGroup(): CustomResourceDefinition[] {
  return [ec2InstanceCrd(), s3BucketCrd(), sqsQueueCrd()];
}
