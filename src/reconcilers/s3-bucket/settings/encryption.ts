/** Default encryption of new objects (spec.encryption). */
import {
  GetBucketEncryptionCommand,
  PutBucketEncryptionCommand,
  type EncryptionType,
  type ServerSideEncryption,
} from "@aws-sdk/client-s3";
import type { JsonValue } from "../../../api/schema/openapi.ts";
import { s3BucketSpecSchema } from "../../../api/v1/index.ts";
import { defineSetting, keptWhenManaged, nonEmpty, settingSpec, specJson } from "./setting.ts";

/**
 * Default encryption in normal form. `blockedEncryptionTypes` (the encryption types uploads may
 * not use, such as SSE-C, sorted) is not the spec's: a desired value takes the bucket's, so a
 * write keeps it as it is.
 */
export interface Encryption {
  readonly algorithm: string;
  readonly kmsKeyId: string | undefined;
  readonly bucketKeyEnabled: boolean;
  readonly blockedEncryptionTypes: readonly string[] | undefined;
}

const WHEN = "only for buckets that set encryption";

/** The default encryption algorithms spec.encryption takes. */
const ALGORITHMS: readonly JsonValue[] =
  s3BucketSpecSchema.node.properties?.["encryption"]?.properties?.["algorithm"]?.enum ?? [];

export const encryption = defineSetting<"encryption", Encryption | null>({
  name: "encryption",
  path: "spec.encryption",
  iam: {
    read: { action: "s3:GetEncryptionConfiguration", calls: ["GetBucketEncryption"], when: WHEN },
    write: { action: "s3:PutEncryptionConfiguration", calls: ["PutBucketEncryption"], when: WHEN },
  },
  desired(spec) {
    const e = spec.encryption;
    if (e === undefined) return undefined;
    return {
      algorithm: e.algorithm,
      kmsKeyId: e.algorithm === "aws:kms" ? e.kmsKeyId : undefined,
      bucketKeyEnabled: e.bucketKeyEnabled,
      blockedEncryptionTypes: undefined,
    };
  },
  completed: (want, have) => ({ ...want, blockedEncryptionTypes: have?.blockedEncryptionTypes }),
  describe: (e) => `encryption: ${e.algorithm}${e.kmsKeyId !== undefined ? ` (${e.kmsKeyId})` : ""}`,
  toSpec: (e) =>
    e === null
      ? undefined
      : specJson({ algorithm: e.algorithm, kmsKeyId: e.kmsKeyId, bucketKeyEnabled: e.bucketKeyEnabled }),
  specOf(e) {
    if (e !== null && !ALGORITHMS.includes(e.algorithm))
      return settingSpec("encryption", undefined, {
        omitted: [
          `encryption: ${e.algorithm} (spec.encryption left unset: it takes ${ALGORITHMS.join(" or ")})`,
        ],
      });
    const blocked = e?.blockedEncryptionTypes ?? [];
    return settingSpec("encryption", this.toSpec(e), {
      omitted:
        blocked.length > 0
          ? [keptWhenManaged("encryption", `blocks uploads encrypted with ${blocked.join(", ")}`)]
          : [],
    });
  },
  notConfigured: ["ServerSideEncryptionConfigurationNotFoundError"],
  none: null,
  async read(s3) {
    const r = await s3.call("GetBucketEncryption", new GetBucketEncryptionCommand({ Bucket: s3.bucket }));
    const rule = r.ServerSideEncryptionConfiguration?.Rules?.[0];
    const by = rule?.ApplyServerSideEncryptionByDefault;
    if (by?.SSEAlgorithm === undefined) return null;
    return {
      algorithm: by.SSEAlgorithm,
      kmsKeyId: by.SSEAlgorithm === "aws:kms" ? nonEmpty(by.KMSMasterKeyID) : undefined,
      bucketKeyEnabled: rule?.BucketKeyEnabled === true,
      blockedEncryptionTypes:
        rule?.BlockedEncryptionTypes !== undefined
          ? [...(rule.BlockedEncryptionTypes.EncryptionType ?? [])].sort()
          : undefined,
    };
  },
  async write(s3, e) {
    await s3.call(
      "PutBucketEncryption",
      new PutBucketEncryptionCommand({
        Bucket: s3.bucket,
        ServerSideEncryptionConfiguration: {
          Rules: [
            {
              ApplyServerSideEncryptionByDefault: {
                SSEAlgorithm: e.algorithm as ServerSideEncryption,
                ...(e.kmsKeyId !== undefined ? { KMSMasterKeyID: e.kmsKeyId } : {}),
              },
              BucketKeyEnabled: e.bucketKeyEnabled,
              ...(e.blockedEncryptionTypes !== undefined
                ? {
                    BlockedEncryptionTypes: {
                      EncryptionType: [...e.blockedEncryptionTypes] as EncryptionType[],
                    },
                  }
                : {}),
            },
          ],
        },
      }),
    );
  },
});
