/**
 * The S3Bucket kind: one general purpose S3 bucket.
 *
 * The bucket name and region identify the bucket and are immutable. Versioning, tags and the
 * lifecycle policies are mutable and reconciled continuously.
 */
import type { KubeObject, ResourceType } from "../../runtime/kube/object.ts";
import * as s from "../schema/builder.ts";
import { buildCrd, type CustomResourceDefinition } from "../schema/crd.ts";
import {
  adoptExistingField,
  commonStatusFields,
  deletionPolicyField,
  onDeletedOutOfBandField,
  regionField,
  tagsField,
} from "./common.ts";
import type { API_VERSION } from "./group.ts";
import { CATEGORIES, GROUP, VERSION } from "./group.ts";
import { readyColumns, regionColumn, standardLabels } from "./printer.ts";

/** Where the S3Bucket kind is served. */
export const S3BucketResource: ResourceType = Object.freeze({
  group: GROUP,
  version: VERSION,
  plural: "s3buckets",
  kind: "S3Bucket",
  namespaced: true,
});

/** The S3 naming rules for general purpose buckets, each with its own message. */
const bucketNameRules = [
  { rule: "!self.contains('..')", message: "bucketName must not contain two adjacent periods" },
  {
    rule: "!self.matches('^[0-9]{1,3}\\\\.[0-9]{1,3}\\\\.[0-9]{1,3}\\\\.[0-9]{1,3}$')",
    message: "bucketName must not be formatted as an IP address",
  },
  {
    rule: "!self.startsWith('xn--') && !self.startsWith('sthree-') && !self.startsWith('amzn-s3-demo-')",
    message: "bucketName must not start with the reserved prefixes xn--, sthree- or amzn-s3-demo-",
  },
  {
    rule:
      "!self.endsWith('-s3alias') && !self.endsWith('--ol-s3') && !self.endsWith('.mrap') && " +
      "!self.endsWith('--x-s3') && !self.endsWith('--table-s3')",
    message:
      "bucketName must not end with the reserved suffixes -s3alias, --ol-s3, .mrap, --x-s3 or --table-s3",
  },
  s.immutable("bucketName is immutable: S3 cannot rename a bucket"),
];

/** Schema of `S3Bucket.spec`. */
export const s3BucketSpecSchema = s.object(
  {
    bucketName: s.string({
      description:
        "Globally unique bucket name: 3-63 characters of lowercase letters, digits, periods and " +
        "hyphens, starting and ending with a letter or digit (the S3 naming rules). Immutable.",
      required: true,
      minLength: 3,
      maxLength: 63,
      pattern: "^[a-z0-9][a-z0-9.-]*[a-z0-9]$",
      validations: bucketNameRules,
    }),
    region: regionField("bucket"),
    versioning: s.boolean({
      description:
        "Enable S3 versioning. Mutable: true enables it; false suspends it on a bucket where it " +
        "was enabled (S3 cannot return a bucket to the unversioned state) and leaves a never-" +
        "versioned bucket alone.",
      default: false,
    }),
    tags: tagsField("bucket"),
    deletionPolicy: deletionPolicyField("bucket"),
    forceDelete: s.boolean({
      description:
        "Delete every object (and object version) in the bucket before deleting it. Without it a " +
        "non-empty bucket is never emptied: deletion waits with Ready=False, reason BucketNotEmpty, " +
        "until the bucket is emptied by other means. Only matters with deletionPolicy Delete. Mutable.",
      default: false,
    }),
    adoptExisting: adoptExistingField(
      "A bucket counts as existing when a bucket named bucketName is owned by this AWS account " +
        "but does not carry this object's ownership tags.",
    ),
    onDeletedOutOfBand: onDeletedOutOfBandField("bucket"),
  },
  { description: "Desired state of the S3 bucket.", required: true },
);

/** Schema of `S3Bucket.status`. */
export const s3BucketStatusSchema = s.object(
  {
    ...commonStatusFields(),
    bucketArn: s.string({ description: "ARN of the bucket (arn:aws:s3:::name).", maxLength: 128 }),
    endpoint: s.string({ description: "HTTPS endpoint of the bucket.", maxLength: 512 }),
    state: s.string({
      description: "Lifecycle state as last observed, for example Available, Deleting or Missing.",
      maxLength: 32,
    }),
    region: s.string({ description: "Region S3 reports for the bucket.", maxLength: 32 }),
  },
  { description: "Observed state of the S3 bucket, written by the operator only." },
);

/** Desired state of an S3 bucket, as served (defaults applied). */
export type S3BucketSpec = s.Static<typeof s3BucketSpecSchema>;
/** Desired state as a client may write it (defaulted fields optional). */
export type S3BucketSpecInput = s.Input<typeof s3BucketSpecSchema>;
/** Observed state of an S3 bucket. */
export type S3BucketStatus = s.Static<typeof s3BucketStatusSchema>;

/** An S3Bucket object as served by the API server. */
export interface S3Bucket extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: "S3Bucket";
  spec: S3BucketSpec;
  status?: S3BucketStatus;
}

/** The generated CustomResourceDefinition of S3Bucket. */
export function s3BucketCrd(): CustomResourceDefinition {
  return buildCrd({
    resource: S3BucketResource,
    singular: "s3bucket",
    shortNames: ["s3b"],
    categories: CATEGORIES,
    labels: standardLabels,
    description:
      "S3Bucket is an S3 bucket managed by kubeprovisioner. The operator creates it in " +
      "spec.region, keeps versioning and tags in line with the spec, and deletes it (only when " +
      "empty, unless spec.forceDelete) on deletion unless spec.deletionPolicy is Retain.",
    spec: s3BucketSpecSchema,
    status: s3BucketStatusSchema,
    selectableFields: [".spec.region", ".spec.bucketName"],
    printerColumns: [
      { name: "BucketName", type: "string", jsonPath: ".spec.bucketName", description: "S3 bucket name" },
      { name: "State", type: "string", jsonPath: ".status.state", description: "Bucket state" },
      { name: "Endpoint", type: "string", jsonPath: ".status.endpoint", description: "Bucket endpoint" },
      ...readyColumns,
      regionColumn,
      {
        name: "Versioning",
        type: "boolean",
        jsonPath: ".spec.versioning",
        description: "Versioning",
        priority: 1,
      },
    ],
  });
}
