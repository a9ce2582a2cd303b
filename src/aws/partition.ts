/** AWS partitions, for building ARNs from a region name. */

/** The AWS partition of `region` (`aws`, `aws-cn`, `aws-us-gov`, ...). */
export function partitionOf(region: string): string {
  if (region.startsWith("cn-")) return "aws-cn";
  if (region.startsWith("us-gov-")) return "aws-us-gov";
  if (region.startsWith("us-iso-")) return "aws-iso";
  if (region.startsWith("us-isob-")) return "aws-iso-b";
  return "aws";
}

/** The ARN of the S3 bucket `name` in `region` (bucket ARNs name neither region nor account). */
export function s3BucketArn(name: string, region: string): string {
  return `arn:${partitionOf(region)}:s3:::${name}`;
}
