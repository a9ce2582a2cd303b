/** Lifecycle rules (spec.lifecycleRules): what S3 does with the objects each rule selects, and when. */
import {
  DeleteBucketLifecycleCommand,
  GetBucketLifecycleConfigurationCommand,
  PutBucketLifecycleConfigurationCommand,
  type LifecycleRule as S3LifecycleRule,
  type LifecycleRuleFilter,
  type TransitionDefaultMinimumObjectSize,
  type TransitionStorageClass,
} from "@aws-sdk/client-s3";
import type { JsonValue } from "../../../api/schema/openapi.ts";
import {
  byId,
  count,
  defineSetting,
  keptWhenManaged,
  rulesBeyondSpec,
  settingSpec,
  specJson,
} from "./setting.ts";

/** One lifecycle rule in normal form (absent actions undefined, transitions sorted by days). */
export interface LifecycleRule {
  readonly id: string;
  readonly enabled: boolean;
  readonly prefix: string;
  /** Tags an object must all carry; `{}` for none. */
  readonly tags: Readonly<Record<string, string>>;
  /** Bytes an object must exceed; undefined for no lower bound. */
  readonly objectSizeGreaterThan: number | undefined;
  /** Bytes an object must stay below; undefined for no upper bound. */
  readonly objectSizeLessThan: number | undefined;
  readonly expirationDays: number | undefined;
  readonly noncurrentVersionExpirationDays: number | undefined;
  readonly abortIncompleteMultipartUploadDays: number | undefined;
  readonly transitions: readonly { readonly days: number; readonly storageClass: string }[];
  /** Transitions of noncurrent versions, `days` counted from when a version became noncurrent. */
  readonly noncurrentTransitions: readonly { readonly days: number; readonly storageClass: string }[];
  /**
   * What the rule does that spec.lifecycleRules cannot ask for (an expiration or a transition on
   * a date, ...), each a short phrase, sorted; `[]` for a rule a spec can ask for. A managed rule
   * has none, so a rule with some is drift that a write removes.
   */
  readonly notInSpec: readonly string[];
  /**
   * The configuration's TransitionDefaultMinimumObjectSize, the same on each of its rules (S3 gives
   * it for the whole configuration). Not the spec's: a desired rule takes the bucket's, so a write
   * keeps it rather than reset it to S3's default.
   */
  readonly configMinimumObjectSize: string | undefined;
}

/** Rules sorted by id, each with both kinds of transitions sorted by days, then storage class. */
export function normalRules(rules: readonly LifecycleRule[]): LifecycleRule[] {
  const byDays = (ts: LifecycleRule["transitions"]) =>
    [...ts].sort((a, b) => a.days - b.days || a.storageClass.localeCompare(b.storageClass));
  return [...rules]
    .map((r) => ({
      ...r,
      transitions: byDays(r.transitions),
      noncurrentTransitions: byDays(r.noncurrentTransitions),
    }))
    .sort(byId);
}

const WHEN = "only for buckets that set lifecycleRules";

/** The rules sorted by id; none is `[]` (an empty spec list removes every rule). */
export const lifecycleRules = defineSetting<"lifecycleRules", readonly LifecycleRule[]>({
  name: "lifecycleRules",
  path: "spec.lifecycleRules",
  iam: {
    read: { action: "s3:GetLifecycleConfiguration", calls: ["GetBucketLifecycleConfiguration"], when: WHEN },
    write: {
      action: "s3:PutLifecycleConfiguration",
      calls: ["PutBucketLifecycleConfiguration", "DeleteBucketLifecycle"],
      when: `${WHEN} (also to remove the rules)`,
    },
  },
  desired(spec) {
    if (spec.lifecycleRules === undefined) return undefined;
    return normalRules(
      spec.lifecycleRules.map((r) => ({
        id: r.id,
        enabled: r.enabled,
        prefix: r.prefix ?? "",
        tags: r.tags ?? {},
        objectSizeGreaterThan: r.objectSizeGreaterThan,
        objectSizeLessThan: r.objectSizeLessThan,
        expirationDays: r.expirationDays,
        noncurrentVersionExpirationDays: r.noncurrentVersionExpirationDays,
        abortIncompleteMultipartUploadDays: r.abortIncompleteMultipartUploadDays,
        transitions: (r.transitions ?? []).map((t) => ({ days: t.days, storageClass: t.storageClass })),
        noncurrentTransitions: (r.noncurrentVersionTransitions ?? []).map((t) => ({
          days: t.noncurrentDays,
          storageClass: t.storageClass,
        })),
        notInSpec: [],
        configMinimumObjectSize: undefined,
      })),
    );
  },
  completed: (want, have) =>
    want.map((r) => ({ ...r, configMinimumObjectSize: have[0]?.configMinimumObjectSize })),
  describe: (rules) => `lifecycleRules: ${count(rules.length, "rule")}`,
  toSpec: (rules) => (rules.length === 0 ? undefined : rules.map(ruleSpec)),
  // Rules that do what the spec cannot say are left unset: adopting them would remove it.
  specOf(rules) {
    const beyond = rulesBeyondSpec(
      "lifecycleRules",
      rules,
      "it has neither dates nor noncurrent version counts",
    );
    if (beyond !== undefined) return beyond;
    const size = rules[0]?.configMinimumObjectSize;
    return settingSpec("lifecycleRules", rules.length === 0 ? undefined : rules.map(ruleSpec), {
      omitted:
        size !== undefined && size !== "all_storage_classes_128K"
          ? [
              keptWhenManaged(
                "lifecycleRules",
                `the configuration's minimum object size to transition, ${size}`,
              ),
            ]
          : [],
    });
  },
  items: { idField: "id", list: (rules) => rules.map((r) => [r.id, ruleSpec(r)] as const) },
  notConfigured: ["NoSuchLifecycleConfiguration"],
  none: [],
  async read(s3) {
    const config = await s3.call(
      "GetBucketLifecycleConfiguration",
      new GetBucketLifecycleConfigurationCommand({ Bucket: s3.bucket }),
    );
    return normalRules(
      (config.Rules ?? []).map((x) => ({
        id: x.ID ?? "",
        enabled: x.Status === "Enabled",
        prefix: x.Filter?.Prefix ?? x.Filter?.And?.Prefix ?? x.Prefix ?? "",
        tags: filterTags(x.Filter),
        objectSizeGreaterThan: x.Filter?.ObjectSizeGreaterThan ?? x.Filter?.And?.ObjectSizeGreaterThan,
        objectSizeLessThan: x.Filter?.ObjectSizeLessThan ?? x.Filter?.And?.ObjectSizeLessThan,
        expirationDays: x.Expiration?.Days,
        noncurrentVersionExpirationDays: x.NoncurrentVersionExpiration?.NoncurrentDays,
        abortIncompleteMultipartUploadDays: x.AbortIncompleteMultipartUpload?.DaysAfterInitiation,
        transitions: (x.Transitions ?? [])
          .filter((t) => t.Days !== undefined)
          .map((t) => ({ days: t.Days ?? 0, storageClass: t.StorageClass ?? "" })),
        noncurrentTransitions: (x.NoncurrentVersionTransitions ?? []).map((t) => ({
          days: t.NoncurrentDays ?? 0,
          storageClass: t.StorageClass ?? "",
        })),
        notInSpec: notInSpec(x),
        configMinimumObjectSize: config.TransitionDefaultMinimumObjectSize,
      })),
    );
  },
  async write(s3, rules) {
    if (rules.length === 0) {
      await s3.call("DeleteBucketLifecycle", new DeleteBucketLifecycleCommand({ Bucket: s3.bucket }));
      return;
    }
    await s3.call(
      "PutBucketLifecycleConfiguration",
      new PutBucketLifecycleConfigurationCommand({
        Bucket: s3.bucket,
        LifecycleConfiguration: { Rules: rules.map(lifecycleRule) },
        ...(rules[0]?.configMinimumObjectSize !== undefined
          ? {
              TransitionDefaultMinimumObjectSize: rules[0]
                .configMinimumObjectSize as TransitionDefaultMinimumObjectSize,
            }
          : {}),
      }),
    );
  },
});

/** What a rule as S3 gives it does that spec.lifecycleRules cannot ask for, as phrases. */
function notInSpec(x: S3LifecycleRule): string[] {
  const phrases = new Set<string>();
  if (x.Expiration?.Date !== undefined) phrases.add("expires objects on a date");
  if (x.Expiration?.ExpiredObjectDeleteMarker === true) phrases.add("removes expired object delete markers");
  if ((x.Transitions ?? []).some((t) => t.Date !== undefined)) phrases.add("moves objects on a date");
  if (
    x.NoncurrentVersionExpiration?.NewerNoncurrentVersions !== undefined ||
    (x.NoncurrentVersionTransitions ?? []).some((t) => t.NewerNoncurrentVersions !== undefined)
  )
    phrases.add("keeps a number of newer noncurrent versions");
  return [...phrases].sort();
}

/**
 * One lifecycle rule as spec.lifecycleRules writes it (what the spec leaves out left out), and
 * for a plan `notInSpec`: what the rule does that no spec can ask for.
 */
function ruleSpec(r: LifecycleRule): JsonValue {
  return specJson({
    id: r.id,
    enabled: r.enabled,
    prefix: r.prefix !== "" ? r.prefix : undefined,
    tags: Object.keys(r.tags).length > 0 ? { ...r.tags } : undefined,
    objectSizeGreaterThan: r.objectSizeGreaterThan,
    objectSizeLessThan: r.objectSizeLessThan,
    expirationDays: r.expirationDays,
    noncurrentVersionExpirationDays: r.noncurrentVersionExpirationDays,
    abortIncompleteMultipartUploadDays: r.abortIncompleteMultipartUploadDays,
    transitions:
      r.transitions.length > 0
        ? r.transitions.map((t) => ({ days: t.days, storageClass: t.storageClass }))
        : undefined,
    noncurrentVersionTransitions:
      r.noncurrentTransitions.length > 0
        ? r.noncurrentTransitions.map((t) => ({ noncurrentDays: t.days, storageClass: t.storageClass }))
        : undefined,
    notInSpec: r.notInSpec.length > 0 ? [...r.notInSpec] : undefined,
  });
}

/** One lifecycle rule as PutBucketLifecycleConfiguration takes it. */
function lifecycleRule(r: LifecycleRule) {
  return {
    ID: r.id,
    Status: r.enabled ? ("Enabled" as const) : ("Disabled" as const),
    Filter: lifecycleFilter(r),
    ...(r.expirationDays !== undefined ? { Expiration: { Days: r.expirationDays } } : {}),
    ...(r.noncurrentVersionExpirationDays !== undefined
      ? { NoncurrentVersionExpiration: { NoncurrentDays: r.noncurrentVersionExpirationDays } }
      : {}),
    ...(r.abortIncompleteMultipartUploadDays !== undefined
      ? { AbortIncompleteMultipartUpload: { DaysAfterInitiation: r.abortIncompleteMultipartUploadDays } }
      : {}),
    ...(r.transitions.length > 0
      ? {
          Transitions: r.transitions.map((t) => ({
            Days: t.days,
            StorageClass: t.storageClass as TransitionStorageClass,
          })),
        }
      : {}),
    ...(r.noncurrentTransitions.length > 0
      ? {
          NoncurrentVersionTransitions: r.noncurrentTransitions.map((t) => ({
            NoncurrentDays: t.days,
            StorageClass: t.storageClass as TransitionStorageClass,
          })),
        }
      : {}),
  };
}

/**
 * The filter of a lifecycle rule as S3 takes it: a Filter holds exactly one of Prefix, Tag,
 * ObjectSizeGreaterThan, ObjectSizeLessThan and And, so one condition goes on its own (no
 * condition is the empty prefix: every object) and two or more are joined by And.
 */
function lifecycleFilter(r: LifecycleRule): LifecycleRuleFilter {
  const tags = Object.entries(r.tags).map(([Key, Value]) => ({ Key, Value }));
  const sizes = {
    ...(r.objectSizeGreaterThan !== undefined ? { ObjectSizeGreaterThan: r.objectSizeGreaterThan } : {}),
    ...(r.objectSizeLessThan !== undefined ? { ObjectSizeLessThan: r.objectSizeLessThan } : {}),
  };
  const prefix = r.prefix !== "" ? { Prefix: r.prefix } : {};
  const conditions = Object.keys(prefix).length + tags.length + Object.keys(sizes).length;
  const [only] = tags;
  if (conditions > 1) return { And: { ...prefix, ...(tags.length > 0 ? { Tags: tags } : {}), ...sizes } };
  if (only !== undefined) return { Tag: only };
  if (conditions === 1 && r.prefix === "") return sizes;
  return { Prefix: r.prefix };
}

/** The tags a lifecycle filter asks for, alone or under And. */
function filterTags(f: LifecycleRuleFilter | undefined): Record<string, string> {
  const tags = f?.Tag !== undefined ? [f.Tag] : (f?.And?.Tags ?? []);
  return Object.fromEntries(tags.map((t) => [t.Key ?? "", t.Value ?? ""]));
}
