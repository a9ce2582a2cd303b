/**
 * The bucket settings beyond tags and versioning, one module each (./setting.ts says what a
 * setting is), in the order they are applied; and what is done with all of them alike: which the
 * spec manages, what it asks for, reading them, and the changes of a plan. A new setting is one
 * more module and one more entry in {@link SETTINGS} (and its spec field): the reads, the plan,
 * the writes, the drift metric's labels and the kind's IAM table follow from it.
 */
import { isDeepStrictEqual } from "node:util";
import type { S3BucketSpec } from "../../../api/v1/index.ts";
import { AwsError } from "../../../aws/errors.ts";
import { listItemPath, type Change } from "../../common/changes.ts";
import type { IamAction } from "../../common/iam.ts";
import type { BucketCalls } from "./calls.ts";
import { cors } from "./cors.ts";
import { encryption } from "./encryption.ts";
import { lifecycleRules } from "./lifecycle-rules.ts";
import { logging } from "./logging.ts";
import { notifications } from "./notifications.ts";
import { objectLock } from "./object-lock.ts";
import { objectOwnership } from "./object-ownership.ts";
import { policy } from "./policy.ts";
import { publicAccessBlock } from "./public-access-block.ts";
import { replication } from "./replication.ts";
import type { BucketSettingDef, ResolvedTargets } from "./setting.ts";
import { website } from "./website.ts";

export type { BucketCalls } from "./calls.ts";
export type { ResolvedTargets } from "./setting.ts";

/** Every managed setting, in the order they are applied. */
export const SETTINGS = [
  objectOwnership,
  encryption,
  publicAccessBlock,
  policy,
  lifecycleRules,
  notifications,
  replication,
  logging,
  objectLock,
  cors,
  website,
] as const;

/** One managed setting, by its definition. */
type AnySetting = (typeof SETTINGS)[number];

/** The name of one managed setting (its spec field). */
export type BucketSetting = AnySetting["name"];

/** The names of the managed settings, in the order they are applied. */
export const BUCKET_SETTINGS: readonly BucketSetting[] = SETTINGS.map((s) => s.name);

/** The normal form of setting `S`. */
type ValueOf<S> = S extends BucketSettingDef<string, infer V> ? V : never;

/**
 * Each setting in normal form. `null`: the bucket has none (S3 answered "not configured"; no
 * lifecycle rules is `[]`). A key that is absent was not read.
 */
export type BucketSettings = { -readonly [S in AnySetting as S["name"]]?: ValueOf<S> };

/** The IAM actions of every setting's calls, for the kind's IAM table. */
export const SETTINGS_IAM: readonly IamAction[] = SETTINGS.flatMap((s) => [
  s.iam.read,
  s.iam.write,
  ...(s.iam.more ?? []),
]);

/** Whether `spec` manages `setting`. */
function isManaged(setting: BucketSettingDef<string, unknown>, spec: S3BucketSpec): boolean {
  return setting.managed?.(spec) ?? (spec as Record<string, unknown>)[setting.name] !== undefined;
}

/** The settings the spec manages (sets), in the order they are applied. */
export function managedSettings(spec: S3BucketSpec): BucketSetting[] {
  return SETTINGS.filter((s) => isManaged(s, spec)).map((s) => s.name);
}

/**
 * The settings the spec sets, each in normal form: what the bucket must have.
 * @throws Error when a reference was not resolved (the flow resolves every one
 *   first: ../references.ts).
 */
export function desiredSettings(spec: S3BucketSpec, resolved: ResolvedTargets = {}): BucketSettings {
  const out: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    if (!isManaged(s, spec)) continue;
    const want = (s as BucketSettingDef<string, unknown>).desired(spec, resolved);
    if (want !== undefined) out[s.name] = want;
  }
  return out as BucketSettings;
}

/**
 * The settings a bucket that CreateBucket just made for `spec` has: those CreateBucket sets
 * (Object Ownership, as the spec asks or absent), which create never writes again.
 */
export function createdSettings(spec: S3BucketSpec): BucketSettings {
  const out: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    const def = s as BucketSettingDef<string, unknown>;
    if (def.createdWithBucket === true) out[s.name] = def.desired(spec, {}) ?? def.none;
  }
  return out as BucketSettings;
}

/** The IAM actions the create path calls for the settings of `spec` after CreateBucket, in order. */
export function createSettingActions(spec: S3BucketSpec): string[] {
  return SETTINGS.filter((s) => isManaged(s, spec) && s.createdWithBucket !== true).map(
    (s) => s.iam.write.action,
  );
}

/** Reads the given settings in normal form, in the order they are applied; each is one call. */
export async function readSettings(
  s3: BucketCalls,
  which: readonly BucketSetting[],
): Promise<BucketSettings> {
  const out: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    if (which.includes(s.name)) out[s.name] = await readSetting(s as BucketSettingDef<string, unknown>, s3);
  }
  return out as BucketSettings;
}

/** Reads `setting`; a "not configured" answer is its `none`. */
async function readSetting<V>(setting: BucketSettingDef<string, V>, s3: BucketCalls): Promise<V> {
  try {
    return await setting.read(s3);
  } catch (err) {
    if (!(err instanceof AwsError && setting.notConfigured.includes(err.code))) throw err;
    return setting.none;
  }
}

/** A setting to write: its changes (one apply group, named after it) and the write itself. */
export interface SettingPlan {
  readonly setting: BucketSetting;
  /** What differs, for a plan; all of group {@link setting}. */
  readonly changes: readonly Change[];
  /** Writes the desired value: the whole document. */
  write(s3: BucketCalls): Promise<void>;
}

/**
 * The settings that differ between `desired` and `actual`, in the order to apply them. A setting
 * `actual` does not hold (not read) counts as different: this is how create writes them all.
 * Values are compared in normal form (policies as JSON values, rules by id).
 */
export function settingPlans(desired: BucketSettings, actual: BucketSettings): SettingPlan[] {
  const out: SettingPlan[] = [];
  for (const s of SETTINGS) {
    const plan = settingPlan(s as BucketSettingDef<BucketSetting, unknown>, desired, actual);
    if (plan !== undefined) out.push(plan);
  }
  return out;
}

function settingPlan<V>(
  setting: BucketSettingDef<BucketSetting, V>,
  desired: BucketSettings,
  actual: BucketSettings,
): SettingPlan | undefined {
  const wanted = desired[setting.name] as V | undefined;
  if (wanted === undefined || wanted === null) return undefined;
  const have = actual[setting.name] as V | undefined;
  const want =
    have !== undefined && setting.completed !== undefined ? setting.completed(wanted, have) : wanted;
  if (have !== undefined && isDeepStrictEqual(have, want)) return undefined;
  return {
    setting: setting.name,
    changes: changesOf(setting, want, have),
    write: (s3) => setting.write(s3, want),
  };
}

/**
 * The changes of a write of `want` over `have`: one per rule that differs for a setting of
 * rules with ids, else one for the whole setting.
 */
function changesOf<V>(
  setting: BucketSettingDef<BucketSetting, V>,
  want: NonNullable<V>,
  have: V | undefined,
): Change[] {
  const base = {
    setting: setting.name,
    actions: [setting.iam.write.action],
    disruption: "none" as const,
    group: setting.name,
  };
  const items = setting.items;
  if (items !== undefined && have !== undefined) {
    const before = new Map(items.list(have));
    const after = new Map(items.list(want));
    const changes: Change[] = [];
    for (const id of [...new Set([...after.keys(), ...before.keys()])].sort()) {
      const [observed, desired] = [before.get(id), after.get(id)];
      if (isDeepStrictEqual(observed, desired)) continue;
      const verb = observed === undefined ? "added" : desired === undefined ? "removed" : "changed";
      changes.push({
        ...base,
        path: listItemPath(setting.path, items.idField, id),
        ...(observed !== undefined ? { observed } : {}),
        ...(desired !== undefined ? { desired } : {}),
        description: `${setting.name}: ${verb} ${id}`,
      });
    }
    // Rules that differ only in what no rule's spec form shows: the setting as a whole.
    if (changes.length > 0) return changes;
  }
  const observed = have !== undefined ? setting.toSpec(have) : undefined;
  const desired = setting.toSpec(want);
  return [
    {
      ...base,
      path: setting.path,
      ...(observed !== undefined ? { observed } : {}),
      ...(desired !== undefined ? { desired } : {}),
      description: setting.describe(want, have),
    },
  ];
}
