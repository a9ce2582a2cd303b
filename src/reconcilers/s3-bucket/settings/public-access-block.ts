/** S3 Block Public Access for the bucket (spec.publicAccessBlock). */
import { GetPublicAccessBlockCommand, PutPublicAccessBlockCommand } from "@aws-sdk/client-s3";
import { defineSetting, settingSpec } from "./setting.ts";

/** Block Public Access in normal form: the four switches. */
export interface PublicAccessBlock {
  readonly blockPublicAcls: boolean;
  readonly ignorePublicAcls: boolean;
  readonly blockPublicPolicy: boolean;
  readonly restrictPublicBuckets: boolean;
}

const WHEN = "only for buckets that set publicAccessBlock";

export const publicAccessBlock = defineSetting<"publicAccessBlock", PublicAccessBlock | null>({
  name: "publicAccessBlock",
  path: "spec.publicAccessBlock",
  iam: {
    read: { action: "s3:GetBucketPublicAccessBlock", calls: ["GetPublicAccessBlock"], when: WHEN },
    write: { action: "s3:PutBucketPublicAccessBlock", calls: ["PutPublicAccessBlock"], when: WHEN },
  },
  desired(spec) {
    const p = spec.publicAccessBlock;
    if (p === undefined) return undefined;
    return {
      blockPublicAcls: p.blockPublicAcls,
      ignorePublicAcls: p.ignorePublicAcls,
      blockPublicPolicy: p.blockPublicPolicy,
      restrictPublicBuckets: p.restrictPublicBuckets,
    };
  },
  describe: () => "publicAccessBlock",
  toSpec: (p) => (p === null ? undefined : { ...p }),
  specOf: (p) => settingSpec("publicAccessBlock", p === null ? undefined : { ...p }),
  notConfigured: ["NoSuchPublicAccessBlockConfiguration"],
  none: null,
  async read(s3) {
    const r = await s3.call("GetPublicAccessBlock", new GetPublicAccessBlockCommand({ Bucket: s3.bucket }));
    const c = r.PublicAccessBlockConfiguration;
    if (c === undefined) return null;
    return {
      blockPublicAcls: c.BlockPublicAcls === true,
      ignorePublicAcls: c.IgnorePublicAcls === true,
      blockPublicPolicy: c.BlockPublicPolicy === true,
      restrictPublicBuckets: c.RestrictPublicBuckets === true,
    };
  },
  async write(s3, p) {
    await s3.call(
      "PutPublicAccessBlock",
      new PutPublicAccessBlockCommand({
        Bucket: s3.bucket,
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: p.blockPublicAcls,
          IgnorePublicAcls: p.ignorePublicAcls,
          BlockPublicPolicy: p.blockPublicPolicy,
          RestrictPublicBuckets: p.restrictPublicBuckets,
        },
      }),
    );
  },
});
