/** The CORS rules of the bucket (spec.cors), in S3's order: the first rule that matches applies. */
import { DeleteBucketCorsCommand, GetBucketCorsCommand, PutBucketCorsCommand } from "@aws-sdk/client-s3";
import { count, defineSetting, nonEmpty, settingSpec, specJson } from "./setting.ts";

/** One CORS rule in normal form (its lists sorted: S3 treats each as a set). */
export interface CorsRule {
  readonly id: string | undefined;
  readonly allowedMethods: readonly string[];
  readonly allowedOrigins: readonly string[];
  readonly allowedHeaders: readonly string[];
  readonly exposeHeaders: readonly string[];
  readonly maxAgeSeconds: number | undefined;
}

/** `r` with each of its lists sorted. */
export function normalCorsRule(r: CorsRule): CorsRule {
  const sorted = (xs: readonly string[]) => [...xs].sort();
  return {
    ...r,
    allowedMethods: sorted(r.allowedMethods),
    allowedOrigins: sorted(r.allowedOrigins),
    allowedHeaders: sorted(r.allowedHeaders),
    exposeHeaders: sorted(r.exposeHeaders),
  };
}

const WHEN = "only for buckets that set cors";

/** The rules in S3's order, which matters; none is `[]` (an empty spec list removes every rule). */
export const cors = defineSetting<"cors", readonly CorsRule[]>({
  name: "cors",
  path: "spec.cors",
  iam: {
    read: { action: "s3:GetBucketCORS", calls: ["GetBucketCors"], when: WHEN },
    write: {
      action: "s3:PutBucketCORS",
      calls: ["PutBucketCors", "DeleteBucketCors"],
      when: `${WHEN} (also to remove the rules)`,
    },
  },
  desired: (spec) =>
    spec.cors?.map((r) =>
      normalCorsRule({
        id: r.id,
        allowedMethods: r.allowedMethods,
        allowedOrigins: r.allowedOrigins,
        allowedHeaders: r.allowedHeaders ?? [],
        exposeHeaders: r.exposeHeaders ?? [],
        maxAgeSeconds: r.maxAgeSeconds,
      }),
    ),
  describe: (rules) => `cors: ${count(rules.length, "rule")}`,
  toSpec: (rules) =>
    rules.length === 0
      ? undefined
      : rules.map((r) =>
          specJson({
            id: r.id,
            allowedMethods: [...r.allowedMethods],
            allowedOrigins: [...r.allowedOrigins],
            allowedHeaders: r.allowedHeaders.length > 0 ? [...r.allowedHeaders] : undefined,
            exposeHeaders: r.exposeHeaders.length > 0 ? [...r.exposeHeaders] : undefined,
            maxAgeSeconds: r.maxAgeSeconds,
          }),
        ),
  specOf(rules) {
    return settingSpec("cors", this.toSpec(rules));
  },
  notConfigured: ["NoSuchCORSConfiguration"],
  none: [],
  async read(s3) {
    const r = await s3.call("GetBucketCors", new GetBucketCorsCommand({ Bucket: s3.bucket }));
    return (r.CORSRules ?? []).map((x) =>
      normalCorsRule({
        id: nonEmpty(x.ID),
        allowedMethods: x.AllowedMethods ?? [],
        allowedOrigins: x.AllowedOrigins ?? [],
        allowedHeaders: x.AllowedHeaders ?? [],
        exposeHeaders: x.ExposeHeaders ?? [],
        maxAgeSeconds: x.MaxAgeSeconds,
      }),
    );
  },
  async write(s3, rules) {
    if (rules.length === 0) {
      await s3.call("DeleteBucketCors", new DeleteBucketCorsCommand({ Bucket: s3.bucket }));
      return;
    }
    await s3.call(
      "PutBucketCors",
      new PutBucketCorsCommand({
        Bucket: s3.bucket,
        CORSConfiguration: { CORSRules: rules.map(corsRule) },
      }),
    );
  },
});

/** One CORS rule as PutBucketCors takes it (absent lists and fields left out). */
function corsRule(r: CorsRule) {
  return {
    ...(r.id !== undefined ? { ID: r.id } : {}),
    AllowedMethods: [...r.allowedMethods],
    AllowedOrigins: [...r.allowedOrigins],
    ...(r.allowedHeaders.length > 0 ? { AllowedHeaders: [...r.allowedHeaders] } : {}),
    ...(r.exposeHeaders.length > 0 ? { ExposeHeaders: [...r.exposeHeaders] } : {}),
    ...(r.maxAgeSeconds !== undefined ? { MaxAgeSeconds: r.maxAgeSeconds } : {}),
  };
}
