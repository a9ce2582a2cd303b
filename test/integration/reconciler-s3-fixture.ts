/**
 * The S3Bucket layer over {@link ReconcilerEnv}: the kind's defaults and mutating operations, and
 * bucket lookups through an S3 client talking to moto directly (the "out of band" actor).
 */
import {
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  HeadBucketCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import type { S3Bucket } from "../../src/api/v1/index.ts";
import { ReconcilerEnv, type EnvOptions, type Served } from "../support/reconciler-env.ts";

/** An S3Bucket as served. */
export type BucketObj = Served<S3Bucket>;

/** A running environment for the S3Bucket tests of one file. */
export class S3Env extends ReconcilerEnv<BucketObj> {
  constructor(ns: string, opts: Omit<EnvOptions, "ns"> = {}) {
    super(
      {
        kind: "S3Bucket",
        plural: "s3buckets",
        controller: "s3bucket",
        mutating: [
          "CreateBucket",
          "PutBucketTagging",
          "PutBucketVersioning",
          "PutBucketEncryption",
          "PutPublicAccessBlock",
          "PutBucketPolicy",
          "PutBucketLifecycleConfiguration",
          "DeleteBucketLifecycle",
          "PutBucketOwnershipControls",
          "PutBucketNotificationConfiguration",
          "PutBucketReplication",
          "PutBucketLogging",
          "PutObjectLockConfiguration",
          "PutBucketCors",
          "DeleteBucketCors",
          "PutBucketWebsite",
          "DeleteBucket",
          "DeleteObjects",
          "DeleteObject",
        ],
        defaults: (name) => ({ bucketName: name, region: "us-east-1" }),
      },
      { ...opts, ns },
    );
  }

  /** An S3 client talking to moto directly, bypassing the proxy's counts. */
  s3(region = "us-east-1"): S3Client {
    return this.client(region, (config) => new S3Client({ ...config, forcePathStyle: true }));
  }

  async bucketExists(name: string, region = "us-east-1"): Promise<boolean> {
    try {
      await this.s3(region).send(new HeadBucketCommand({ Bucket: name }));
      return true;
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
        return false;
      throw err;
    }
  }

  async bucketTags(name: string, region = "us-east-1"): Promise<Record<string, string>> {
    try {
      const out = await this.s3(region).send(new GetBucketTaggingCommand({ Bucket: name }));
      return Object.fromEntries((out.TagSet ?? []).map((t) => [t.Key ?? "", t.Value ?? ""]));
    } catch (err) {
      if ((err as Error).name === "NoSuchTagSet") return {};
      throw err;
    }
  }

  async versioning(name: string, region = "us-east-1"): Promise<string | undefined> {
    return (await this.s3(region).send(new GetBucketVersioningCommand({ Bucket: name }))).Status;
  }
}
