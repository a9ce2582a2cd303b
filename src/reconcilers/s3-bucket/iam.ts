/**
 * The IAM actions the S3Bucket kind calls: the bucket's own (create, delete, tags, versioning,
 * emptying) and those of each managed setting (./settings/), for the kind's IAM table and for the
 * actions a plan names.
 */
import type { IamAction } from "../common/iam.ts";
import { SETTINGS_IAM } from "./settings/index.ts";

export const CREATE_BUCKET: IamAction = { action: "s3:CreateBucket" };
export const PUT_BUCKET_TAGGING: IamAction = { action: "s3:PutBucketTagging" };
export const PUT_BUCKET_VERSIONING: IamAction = { action: "s3:PutBucketVersioning" };

/** Every IAM action of the kind, with the calls that need it. */
export const S3_BUCKET_IAM: readonly IamAction[] = [
  CREATE_BUCKET,
  { action: "s3:DeleteBucket" },
  { action: "s3:ListBucket", calls: ["HeadBucket"] },
  {
    action: "s3:ListAllMyBuckets",
    calls: ["ListBuckets"],
    when: "for an untagged bucket in the crash window of a create, and by kubeprovisioner export",
  },
  {
    action: "s3:GetBucketLocation",
    when: "by kubeprovisioner export, for a bucket ListBuckets lists without its region",
  },
  { action: "s3:ListBucketVersions", calls: ["ListObjectVersions"] },
  { action: "s3:GetBucketTagging" },
  PUT_BUCKET_TAGGING,
  { action: "s3:GetBucketVersioning" },
  PUT_BUCKET_VERSIONING,
  { action: "s3:DeleteObject", calls: ["DeleteObjects"], when: "only for buckets with forceDelete: true" },
  {
    action: "s3:DeleteObjectVersion",
    calls: ["DeleteObjects"],
    when: "only for buckets with forceDelete: true",
  },
  ...SETTINGS_IAM,
];
