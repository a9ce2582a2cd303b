/**
 * The `compute.cloud.com/v1` API: kinds, their schemas and CRDs, and condition helpers.
 * Import from here rather than from the individual files.
 */
export * from "./group.ts";
export * from "./conditions.ts";
export * from "./ec2-instance.ts";
export * from "./s3-bucket.ts";
export * from "./sqs-queue.ts";
export * from "./aws-account.ts";
export { REGION_PATTERN } from "./common.ts";
