/**
 * The bucket policy (spec.policy), with one statement appended per bucket spec.allowLoggingFrom
 * names, which lets that bucket's access logs in.
 */
import { GetBucketPolicyCommand, PutBucketPolicyCommand } from "@aws-sdk/client-s3";
import type { S3BucketSpec } from "../../../api/v1/index.ts";
import type { JsonValue } from "../../../api/schema/openapi.ts";
import { s3BucketArn } from "../../../aws/partition.ts";
import { defineSetting, normalJson, settingSpec, type ResolvedTargets } from "./setting.ts";

/** The Sid of the bucket policy statement that lets bucket `bucketName` write its access logs here. */
export function loggingSid(bucketName: string): string {
  return `s3-logging-${bucketName}`;
}

/**
 * The bucket policy the spec manages: spec.policy (or an empty 2012-10-17 policy) with one
 * statement per bucket allowLoggingFrom names appended, sorted by bucket name:
 * logging.s3.amazonaws.com may s3:PutObject into this bucket when aws:SourceArn is that bucket.
 */
export function bucketPolicy(
  policy: S3BucketSpec["policy"],
  bucketArn: string,
  sources: NonNullable<ResolvedTargets["loggingSources"]>,
): JsonValue {
  const grants = [...sources]
    .sort((a, b) => (a.bucketName < b.bucketName ? -1 : a.bucketName > b.bucketName ? 1 : 0))
    .map((b) => ({
      Sid: loggingSid(b.bucketName),
      Effect: "Allow",
      Principal: { Service: "logging.s3.amazonaws.com" },
      Action: "s3:PutObject",
      Resource: `${bucketArn}/*`,
      Condition: { ArnLike: { "aws:SourceArn": b.bucketArn } },
    }));
  const base = (policy ?? { Version: "2012-10-17", Statement: [] }) as { Statement: unknown[] };
  return normalJson({ ...base, Statement: [...base.Statement, ...grants] } as JsonValue);
}

const WHEN = "only for buckets that set a policy or allowLoggingFrom";

/** A policy document. */
type Document = NonNullable<JsonValue>;

/** The policy as a JSON value (key order and formatting never count); null when the bucket has none. */
export const policy = defineSetting<"policy", JsonValue | null>({
  name: "policy",
  path: "spec.policy",
  iam: {
    read: { action: "s3:GetBucketPolicy", when: WHEN },
    write: { action: "s3:PutBucketPolicy", when: WHEN },
  },
  managed: (spec) => spec.policy !== undefined || spec.allowLoggingFrom !== undefined,
  desired(spec, resolved) {
    if (spec.allowLoggingFrom !== undefined) {
      const sources = resolved.loggingSources;
      if (sources === undefined) throw new Error("allowLoggingFrom was not resolved to bucket ARNs");
      return bucketPolicy(spec.policy, s3BucketArn(spec.bucketName, spec.region), sources) as Document;
    }
    return spec.policy !== undefined ? (normalJson(spec.policy as JsonValue) as Document) : undefined;
  },
  describe: () => "policy",
  toSpec: (p) => p ?? undefined,
  // The whole policy as spec.policy, statements for other buckets' access logs included.
  specOf: (p) => settingSpec("policy", p ?? undefined),
  notConfigured: ["NoSuchBucketPolicy"],
  none: null,
  async read(s3) {
    const r = await s3.call("GetBucketPolicy", new GetBucketPolicyCommand({ Bucket: s3.bucket }));
    return r.Policy === undefined || r.Policy === "" ? null : (JSON.parse(r.Policy) as JsonValue);
  },
  async write(s3, desired) {
    await s3.call(
      "PutBucketPolicy",
      new PutBucketPolicyCommand({ Bucket: s3.bucket, Policy: JSON.stringify(desired) }),
    );
  },
});
