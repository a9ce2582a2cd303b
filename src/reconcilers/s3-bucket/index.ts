/**
 * The S3Bucket kind: the shared managed-resource flow with the S3 bucket driver.
 */
import { S3BucketResource, s3BucketCrd } from "../../api/v1/index.ts";
import { defineKind, type KindModule } from "../common/kind.ts";
import { s3BucketOutputs } from "./outputs.ts";
import { s3BucketChangeEvents } from "./change-events.ts";
import type { S3BucketView, S3BucketObject } from "./model.ts";
import { S3BucketDriver } from "./driver.ts";

export { S3BucketDriver, type S3BucketDriverOptions } from "./driver.ts";
export type { S3BucketView, S3BucketObject } from "./model.ts";

/** The `s3bucket` controller's kind. */
export const s3BucketKind: KindModule = defineKind<S3BucketObject, S3BucketView>({
  name: "s3bucket",
  resource: S3BucketResource,
  crd: s3BucketCrd,
  changeEvents: s3BucketChangeEvents,
  iam: [
    { action: "s3:CreateBucket" },
    { action: "s3:DeleteBucket" },
    { action: "s3:ListBucket", calls: ["HeadBucket"] },
    {
      action: "s3:ListAllMyBuckets",
      calls: ["ListBuckets"],
      when: "only for an untagged bucket in the crash window of a create",
    },
    { action: "s3:ListBucketVersions", calls: ["ListObjectVersions"] },
    { action: "s3:GetBucketTagging" },
    { action: "s3:PutBucketTagging" },
    { action: "s3:GetBucketVersioning" },
    { action: "s3:PutBucketVersioning" },
    { action: "s3:DeleteObject", calls: ["DeleteObjects"], when: "only for buckets with forceDelete: true" },
    {
      action: "s3:DeleteObjectVersion",
      calls: ["DeleteObjects"],
      when: "only for buckets with forceDelete: true",
    },
    {
      action: "s3:GetEncryptionConfiguration",
      calls: ["GetBucketEncryption"],
      when: "only for buckets that set encryption",
    },
    {
      action: "s3:PutEncryptionConfiguration",
      calls: ["PutBucketEncryption"],
      when: "only for buckets that set encryption",
    },
    {
      action: "s3:GetBucketPublicAccessBlock",
      calls: ["GetPublicAccessBlock"],
      when: "only for buckets that set publicAccessBlock",
    },
    {
      action: "s3:PutBucketPublicAccessBlock",
      calls: ["PutPublicAccessBlock"],
      when: "only for buckets that set publicAccessBlock",
    },
    { action: "s3:GetBucketPolicy", when: "only for buckets that set a policy" },
    { action: "s3:PutBucketPolicy", when: "only for buckets that set a policy" },
    {
      action: "s3:GetLifecycleConfiguration",
      calls: ["GetBucketLifecycleConfiguration"],
      when: "only for buckets that set lifecycleRules",
    },
    {
      action: "s3:PutLifecycleConfiguration",
      calls: ["PutBucketLifecycleConfiguration", "DeleteBucketLifecycle"],
      when: "only for buckets that set lifecycleRules (also to remove the rules)",
    },
    { action: "s3:GetBucketOwnershipControls", when: "only for buckets that set objectOwnership" },
    {
      action: "s3:PutBucketOwnershipControls",
      when: "only for buckets that set objectOwnership (also on CreateBucket with it)",
    },
    {
      action: "s3:GetBucketObjectLockConfiguration",
      calls: ["GetObjectLockConfiguration"],
      when: "only for buckets that set objectLock.defaultRetention",
    },
    {
      action: "s3:PutBucketObjectLockConfiguration",
      calls: ["PutObjectLockConfiguration"],
      when: "only for buckets that set objectLock (also on CreateBucket with Object Lock enabled)",
    },
    { action: "s3:GetBucketCORS", calls: ["GetBucketCors"], when: "only for buckets that set cors" },
    {
      action: "s3:PutBucketCORS",
      calls: ["PutBucketCors", "DeleteBucketCors"],
      when: "only for buckets that set cors (also to remove the rules)",
    },
    { action: "s3:GetBucketWebsite", when: "only for buckets that set website" },
    { action: "s3:PutBucketWebsite", when: "only for buckets that set website" },
  ],
  outputs: s3BucketOutputs,
  driver: (deps) => new S3BucketDriver({ aws: deps.aws, tagPolicy: deps.tagPolicy }),
});
