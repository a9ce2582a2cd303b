/**
 * The port through which a bucket setting (./setting.ts) reads and writes S3: one bucket's calls.
 * ../bucket-api.ts implements it.
 */
import type { S3ClientResolvedConfig, ServiceInputTypes, ServiceOutputTypes } from "@aws-sdk/client-s3";
import type { Command } from "@smithy/types";

/** An S3 command with input `I` and output `O`. */
export type S3Command<I extends ServiceInputTypes, O extends ServiceOutputTypes> = Command<
  ServiceInputTypes,
  I,
  ServiceOutputTypes,
  O,
  S3ClientResolvedConfig
>;

/** The calls of one bucket, as the settings make them. */
export interface BucketCalls {
  readonly bucket: string;
  /** Sends `command` (S3 operation `operation`) with the bucket's abort signal; failures as AwsError. */
  call<I extends ServiceInputTypes, O extends ServiceOutputTypes>(
    operation: string,
    command: S3Command<I, O>,
  ): Promise<O>;
}
