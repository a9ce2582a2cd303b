/** Replication of the bucket's objects to other buckets (spec.replication). */
import {
  GetBucketReplicationCommand,
  PutBucketReplicationCommand,
  type ReplicationRule as S3ReplicationRule,
  type StorageClass,
} from "@aws-sdk/client-s3";
import type { S3BucketSpec } from "../../../api/v1/index.ts";
import { listItemPath } from "../../common/changes.ts";
import {
  byId,
  count,
  defineSetting,
  nonEmpty,
  rulesBeyondSpec,
  settingSpec,
  specJson,
  specRef,
  type ResolvedTargets,
} from "./setting.ts";

/** One replication rule in normal form (an absent prefix is "", an absent storage class undefined). */
export interface ReplicationRule {
  readonly id: string;
  readonly priority: number;
  readonly enabled: boolean;
  readonly prefix: string;
  readonly destinationArn: string;
  readonly storageClass: string | undefined;
  readonly deleteMarkerReplication: boolean;
  /**
   * What the rule does that spec.replication cannot ask for (a tag filter, SSE-KMS objects, an
   * owner override, ...), each a short phrase, sorted; `[]` for a rule a spec can ask for. A
   * managed rule has none, so a rule with some is drift that a write removes.
   */
  readonly notInSpec: readonly string[];
}

/** The replication configuration in normal form: the role and the rules sorted by id. */
export interface Replication {
  readonly roleArn: string;
  readonly rules: readonly ReplicationRule[];
}

/** Rules sorted by id. */
export function normalReplication(r: Replication): Replication {
  return { ...r, rules: [...r.rules].sort(byId) };
}

const WHEN = "only for buckets that set replication";

export const replication = defineSetting<"replication", Replication | null>({
  name: "replication",
  path: "spec.replication",
  iam: {
    read: { action: "s3:GetReplicationConfiguration", calls: ["GetBucketReplication"], when: WHEN },
    write: { action: "s3:PutReplicationConfiguration", calls: ["PutBucketReplication"], when: WHEN },
    more: [
      {
        action: "iam:PassRole",
        calls: ["PutBucketReplication"],
        when: `${WHEN}: passing spec.replication.roleArn to S3`,
      },
    ],
  },
  desired: (spec, resolved) =>
    spec.replication !== undefined ? desiredReplication(spec.replication, resolved) : undefined,
  describe: (r) => `replication: ${count(r.rules.length, "rule")}`,
  toSpec: (r) =>
    r === null
      ? undefined
      : {
          roleArn: r.roleArn,
          rules: r.rules.map((x) =>
            specJson({
              id: x.id,
              priority: x.priority,
              enabled: x.enabled,
              prefix: x.prefix !== "" ? x.prefix : undefined,
              destination: specJson({ bucketArn: x.destinationArn, storageClass: x.storageClass }),
              deleteMarkerReplication: x.deleteMarkerReplication,
              notInSpec: x.notInSpec.length > 0 ? [...x.notInSpec] : undefined,
            }),
          ),
        },
  // Rules that do what the spec cannot say are left unset: adopting them would remove it.
  specOf(r, refs) {
    if (r === null) return settingSpec("replication", undefined);
    const beyond = rulesBeyondSpec(
      "replication",
      r.rules,
      "its rules filter by prefix only and replicate to a bucket and storage class",
    );
    if (beyond !== undefined) return beyond;
    const unresolved: { path: string; arn: string }[] = [];
    const rules = r.rules.map((x) =>
      specJson({
        id: x.id,
        priority: x.priority,
        enabled: x.enabled,
        prefix: x.prefix !== "" ? x.prefix : undefined,
        destination: specJson({
          ...specRef(
            refs,
            "S3Bucket",
            x.destinationArn,
            {
              path: `${listItemPath("spec.replication.rules", "id", x.id)}.destination`,
              refField: "bucketRef",
              arnField: "bucketArn",
            },
            unresolved,
          ),
          storageClass: x.storageClass,
        }),
        deleteMarkerReplication: x.deleteMarkerReplication,
      }),
    );
    return settingSpec("replication", { roleArn: r.roleArn, rules }, { unresolved });
  },
  notConfigured: ["ReplicationConfigurationNotFoundError"],
  none: null,
  async read(s3) {
    const r = await s3.call("GetBucketReplication", new GetBucketReplicationCommand({ Bucket: s3.bucket }));
    const c = r.ReplicationConfiguration;
    if (c === undefined) return null;
    return normalReplication({
      roleArn: c.Role ?? "",
      rules: (c.Rules ?? []).map((x) => ({
        id: x.ID ?? "",
        priority: Number(x.Priority ?? 0),
        enabled: x.Status === "Enabled",
        prefix: x.Filter?.Prefix ?? x.Filter?.And?.Prefix ?? x.Prefix ?? "",
        destinationArn: x.Destination?.Bucket ?? "",
        storageClass: nonEmpty(x.Destination?.StorageClass),
        deleteMarkerReplication: x.DeleteMarkerReplication?.Status === "Enabled",
        notInSpec: notInSpec(x),
      })),
    });
  },
  async write(s3, r) {
    await s3.call(
      "PutBucketReplication",
      new PutBucketReplicationCommand({
        Bucket: s3.bucket,
        ReplicationConfiguration: {
          Role: r.roleArn,
          Rules: r.rules.map((x) => ({
            ID: x.id,
            Priority: x.priority,
            Status: x.enabled ? ("Enabled" as const) : ("Disabled" as const),
            Filter: { Prefix: x.prefix },
            Destination: {
              Bucket: x.destinationArn,
              ...(x.storageClass !== undefined ? { StorageClass: x.storageClass as StorageClass } : {}),
            },
            DeleteMarkerReplication: {
              Status: x.deleteMarkerReplication ? ("Enabled" as const) : ("Disabled" as const),
            },
          })),
        },
      }),
    );
  },
});

/**
 * spec.replication in normal form, each bucketRef replaced by the ARN `resolved` holds for it.
 * @throws Error when a bucketRef was not resolved (the flow resolves every one
 *   first: ../references.ts).
 */
function desiredReplication(
  r: NonNullable<S3BucketSpec["replication"]>,
  resolved: ResolvedTargets,
): Replication {
  return normalReplication({
    roleArn: r.roleArn,
    rules: r.rules.map((rule) => {
      const d = rule.destination;
      const arn =
        d.bucketArn ?? (d.bucketRef !== undefined ? resolved.bucketArns?.get(d.bucketRef.name) : undefined);
      if (arn === undefined)
        throw new Error(`replication rule ${rule.id}: its bucketRef was not resolved to an ARN`);
      return {
        id: rule.id,
        priority: rule.priority,
        enabled: rule.enabled,
        prefix: rule.prefix ?? "",
        destinationArn: arn,
        storageClass: d.storageClass,
        deleteMarkerReplication: rule.deleteMarkerReplication,
        notInSpec: [],
      };
    }),
  });
}

/** What a rule as S3 gives it does that spec.replication cannot ask for, as phrases. */
function notInSpec(x: S3ReplicationRule): string[] {
  const on = (s: { Status?: string | undefined } | undefined): boolean => s?.Status === "Enabled";
  const d = x.Destination;
  const phrases = [
    [x.Filter === undefined, "is a rule of the first schema (no filter)"],
    [x.Filter?.Tag !== undefined || (x.Filter?.And?.Tags ?? []).length > 0, "filters by tags"],
    [on(x.SourceSelectionCriteria?.SseKmsEncryptedObjects), "replicates SSE-KMS encrypted objects"],
    [d?.EncryptionConfiguration?.ReplicaKmsKeyID !== undefined, "encrypts replicas with a KMS key"],
    [d?.Account !== undefined, "names the destination's account"],
    [d?.AccessControlTranslation !== undefined, "changes the replicas' owner"],
    [on(d?.ReplicationTime), "has Replication Time Control"],
    [on(d?.Metrics), "has replication metrics"],
    [on(x.SourceSelectionCriteria?.ReplicaModifications), "replicates replica modifications"],
    [on(x.ExistingObjectReplication), "replicates existing objects"],
  ] as const;
  return phrases.flatMap(([when, phrase]) => (when ? [phrase] : [])).sort();
}
