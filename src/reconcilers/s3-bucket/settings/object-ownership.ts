/** S3 Object Ownership (spec.objectOwnership): who owns the objects others write into the bucket. */
import {
  GetBucketOwnershipControlsCommand,
  PutBucketOwnershipControlsCommand,
  type ObjectOwnership,
} from "@aws-sdk/client-s3";
import { defineSetting, settingSpec } from "./setting.ts";

/** `BucketOwnerEnforced`, `BucketOwnerPreferred` or `ObjectWriter`; null when the bucket has no controls. */
export const objectOwnership = defineSetting<"objectOwnership", string | null>({
  name: "objectOwnership",
  path: "spec.objectOwnership",
  iam: {
    read: { action: "s3:GetBucketOwnershipControls", when: "only for buckets that set objectOwnership" },
    write: {
      action: "s3:PutBucketOwnershipControls",
      calls: ["PutBucketOwnershipControls", "CreateBucket"],
      when: "only for buckets that set objectOwnership (also on CreateBucket with it)",
    },
  },
  // CreateBucket takes ObjectOwnership.
  createdWithBucket: true,
  desired: (spec) => spec.objectOwnership,
  describe: (want, have) => `objectOwnership: ${have ?? "none"} -> ${want}`,
  toSpec: (v) => v ?? undefined,
  specOf: (v) => settingSpec("objectOwnership", v ?? undefined),
  notConfigured: ["OwnershipControlsNotFoundError", "NoSuchOwnershipControls"],
  none: null,
  async read(s3) {
    const r = await s3.call(
      "GetBucketOwnershipControls",
      new GetBucketOwnershipControlsCommand({ Bucket: s3.bucket }),
    );
    return r.OwnershipControls?.Rules?.[0]?.ObjectOwnership ?? null;
  },
  async write(s3, desired) {
    await s3.call(
      "PutBucketOwnershipControls",
      new PutBucketOwnershipControlsCommand({
        Bucket: s3.bucket,
        OwnershipControls: { Rules: [{ ObjectOwnership: desired as ObjectOwnership }] },
      }),
    );
  },
});
