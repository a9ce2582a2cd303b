/**
 * The AWS services the operator talks to, named the way every label, log field and option in
 * src/aws names them.
 */

/** Short, lower-case service names used in metric labels, error info and options. */
export type AwsService = "ec2" | "s3" | "sqs";

/** Every service in {@link AwsService}, in a fixed order. */
export const AWS_SERVICES: readonly AwsService[] = Object.freeze(["ec2", "s3", "sqs"]);

/**
 * The suffix the AWS SDK appends to `AWS_ENDPOINT_URL_` for each service (its service ID, upper
 * case, spaces turned into underscores). The SDK reads these variables itself; this table only
 * lets the factory tell whether an override is in effect.
 */
export const ENDPOINT_ENV_SUFFIX: Readonly<Record<AwsService, string>> = Object.freeze({
  ec2: "EC2",
  s3: "S3",
  sqs: "SQS",
});

/** Display names used at the start of stable error messages ("EC2 RunInstances failed ..."). */
export const SERVICE_DISPLAY_NAME: Readonly<Record<AwsService, string>> = Object.freeze({
  ec2: "EC2",
  s3: "S3",
  sqs: "SQS",
});

const REGION_PATTERN = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/**
 * Whether `region` looks like an AWS region name (`us-east-1`, `eu-central-2`, `us-gov-west-1`).
 * Only the shape is checked; an unknown but well-formed region passes.
 */
export function isRegionName(region: string): boolean {
  return REGION_PATTERN.test(region);
}
