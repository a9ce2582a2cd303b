/** Server access logging (spec.logging): the bucket and prefix S3 writes this bucket's access logs to. */
import {
  GetBucketLoggingCommand,
  PutBucketLoggingCommand,
  type TargetGrant,
  type TargetObjectKeyFormat,
} from "@aws-sdk/client-s3";
import { s3BucketArn } from "../../../aws/partition.ts";
import { count, defineSetting, keptWhenManaged, settingSpec, specRef } from "./setting.ts";

/**
 * Server access logging in normal form. `keyFormat` (how S3 names the log objects) and `grants`
 * (who else may read them; undefined when none) are not the spec's: a desired value takes the
 * bucket's, so a write keeps them as they are.
 */
export interface Logging {
  readonly targetBucket: string;
  readonly targetPrefix: string;
  readonly keyFormat: TargetObjectKeyFormat | undefined;
  readonly grants: readonly TargetGrant[] | undefined;
}

const WHEN = "only for buckets that set logging";

export const logging = defineSetting<"logging", Logging | null>({
  name: "logging",
  path: "spec.logging",
  iam: {
    read: { action: "s3:GetBucketLogging", when: WHEN },
    write: { action: "s3:PutBucketLogging", when: WHEN },
  },
  desired(spec, resolved) {
    if (spec.logging === undefined) return undefined;
    const target = spec.logging.targetBucket ?? resolved.loggingTarget;
    if (target === undefined) throw new Error("logging.targetBucketRef was not resolved to a bucket");
    return {
      targetBucket: target,
      targetPrefix: spec.logging.targetPrefix,
      keyFormat: undefined,
      grants: undefined,
    };
  },
  completed: (want, have) => ({ ...want, keyFormat: have?.keyFormat, grants: have?.grants }),
  describe: (l) => `logging: ${l.targetBucket}/${l.targetPrefix}`,
  toSpec: (l) => (l === null ? undefined : { targetBucket: l.targetBucket, targetPrefix: l.targetPrefix }),
  specOf(l, refs) {
    if (l === null) return settingSpec("logging", undefined);
    const unresolved: { path: string; arn: string }[] = [];
    const target = specRef(
      refs,
      "S3Bucket",
      s3BucketArn(l.targetBucket, refs.region),
      { path: "spec.logging", refField: "targetBucketRef", arnField: "targetBucket", plain: l.targetBucket },
      unresolved,
    );
    const partitioned = l.keyFormat?.PartitionedPrefix;
    const omitted = [
      ...(partitioned !== undefined
        ? [
            keptWhenManaged(
              "logging",
              `log object keys partitioned by ${partitioned.PartitionDateSource ?? "date"}`,
            ),
          ]
        : []),
      ...(l.grants !== undefined
        ? [keptWhenManaged("logging", `${count(l.grants.length, "grant")} on the log objects`)]
        : []),
    ];
    return settingSpec("logging", { ...target, targetPrefix: l.targetPrefix }, { unresolved, omitted });
  },
  // S3 answers a bucket without logging with an empty status, not an error.
  notConfigured: [],
  none: null,
  async read(s3) {
    const r = await s3.call("GetBucketLogging", new GetBucketLoggingCommand({ Bucket: s3.bucket }));
    const l = r.LoggingEnabled;
    if (l?.TargetBucket === undefined) return null;
    return {
      targetBucket: l.TargetBucket,
      targetPrefix: l.TargetPrefix ?? "",
      keyFormat: l.TargetObjectKeyFormat,
      grants: l.TargetGrants !== undefined && l.TargetGrants.length > 0 ? l.TargetGrants : undefined,
    };
  },
  async write(s3, l) {
    await s3.call(
      "PutBucketLogging",
      new PutBucketLoggingCommand({
        Bucket: s3.bucket,
        BucketLoggingStatus: {
          LoggingEnabled: {
            TargetBucket: l.targetBucket,
            TargetPrefix: l.targetPrefix,
            ...(l.keyFormat !== undefined ? { TargetObjectKeyFormat: l.keyFormat } : {}),
            ...(l.grants !== undefined ? { TargetGrants: [...l.grants] } : {}),
          },
        },
      }),
    );
  },
});
