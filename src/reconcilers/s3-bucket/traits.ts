/** What is fixed about the S3Bucket kind (../common/kind-traits.ts). */
import { TAGS_SETTING } from "../common/driver.ts";
import type { KindTraits } from "../common/kind-traits.ts";
import { VERSIONING_SETTING, type S3BucketObject } from "./model.ts";
import { BUCKET_SETTINGS } from "./settings/index.ts";

/** The S3Bucket kind's static facts. */
export const S3_BUCKET_TRAITS: KindTraits<S3BucketObject> = {
  noun: "bucket",
  idField: "bucketArn",
  driftSettings: Object.freeze([TAGS_SETTING, VERSIONING_SETTING, ...BUCKET_SETTINGS]),
  observedFields: ["observedVersioning"],
};
