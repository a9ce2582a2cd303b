/**
 * One managed bucket setting beyond tags and versioning, all of it in one module of this folder:
 * the spec field that manages it, its normal form (what is compared), how S3 reads and writes it,
 * the IAM actions those calls need, and how its changes read in a plan. One rule for every
 * setting: a setting the spec leaves unset is not managed (never read, never written); a set one
 * is read on every poll, compared in its normal form and written only when it differs. ./index.ts
 * holds them in the order they are applied.
 */
import type { S3BucketSpec } from "../../../api/v1/index.ts";
import type { JsonValue } from "../../../api/schema/openapi.ts";
import type { IamAction } from "../../common/iam.ts";
import type { BucketCalls } from "./calls.ts";

/**
 * What the spec's references resolve to (../references.ts), by object name: the ARNs of the
 * SqsQueue objects notifications name, and of the S3Bucket objects replication rules name.
 */
export interface ResolvedTargets {
  readonly queueArns?: ReadonlyMap<string, string>;
  readonly bucketArns?: ReadonlyMap<string, string>;
  /** The bucket name of the S3Bucket logging.targetBucketRef names. */
  readonly loggingTarget?: string;
  /** The bucket names and ARNs of the S3Bucket objects allowLoggingFrom names. */
  readonly loggingSources?: readonly { readonly bucketName: string; readonly bucketArn: string }[];
}

/** How an exported spec names another resource: a reference where the export holds it. */
export interface SpecRefs {
  /** The bucket's region (for the ARNs of the buckets its settings name). */
  readonly region: string;
  /** The exported object whose resource has `arn`, or undefined (../../common/export.ts ExportContext.refOf). */
  refOf(arn: string): { readonly kind: string; readonly name: string } | undefined;
}

/** A setting as spec fields, for `kubeprovisioner export`. */
export interface SettingSpec {
  /** The spec fields, by name; none for a setting left unset. */
  readonly fields: { readonly [field: string]: JsonValue };
  /** Spec paths that name a resource by ARN (or bucket name) because the export does not hold it. */
  readonly unresolved: readonly { readonly path: string; readonly arn: string }[];
  /** What the bucket has that the spec cannot express, each a short phrase. */
  readonly omitted: readonly string[];
}

/** The spec of a setting: `field` set to `value`, or left unset when `value` is undefined. */
export function settingSpec(
  field: string,
  value: JsonValue | undefined,
  more: Partial<Omit<SettingSpec, "fields">> = {},
): SettingSpec {
  return {
    fields: value !== undefined ? { [field]: value } : {},
    unresolved: more.unresolved ?? [],
    omitted: more.omitted ?? [],
  };
}

/**
 * The export's note on a part of `field` the spec does not name and every write keeps as the
 * bucket has it (the setting's `completed`): `what` it is.
 */
export function keptWhenManaged(field: string, what: string): string {
  return `${field}: ${what} (kept as it is when managed)`;
}

/**
 * The export of a list of rules some of which do what the spec cannot ask for (`notInSpec`): the
 * setting left unset, each such rule named, since adopting the rest would remove it; undefined
 * when every rule can be asked for. `why` says what the spec's rules can do.
 */
export function rulesBeyondSpec(
  field: string,
  rules: readonly { readonly id: string; readonly notInSpec: readonly string[] }[],
  why: string,
): SettingSpec | undefined {
  const beyond = rules.filter((r) => r.notInSpec.length > 0);
  if (beyond.length === 0) return undefined;
  return settingSpec(field, undefined, {
    omitted: beyond.map(
      (r) => `${field}: rule ${r.id} ${r.notInSpec.join(", ")} (spec.${field} left unset: ${why})`,
    ),
  });
}

/**
 * A reference to the resource of `kind` with `arn`, as the spec writes it: `{[refField]: {name}}`
 * when the export holds it, else `{[arnField]: plain}` (the ARN, or a bucket name) with its path
 * listed in `unresolved`.
 */
export function specRef(
  refs: SpecRefs,
  kind: string,
  arn: string,
  at: {
    readonly path: string;
    readonly refField: string;
    readonly arnField: string;
    readonly plain?: string;
  },
  unresolved: { path: string; arn: string }[],
): { [field: string]: JsonValue } {
  const ref = refs.refOf(arn);
  if (ref !== undefined && ref.kind === kind) return { [at.refField]: { name: ref.name } };
  unresolved.push({ path: `${at.path}.${at.arnField}`, arn });
  return { [at.arnField]: at.plain ?? arn };
}

/**
 * One managed setting named `N` (its spec field), whose normal form is `V`; `null` in `V` stands
 * for a bucket that has none.
 */
export interface BucketSettingDef<N extends string, V> {
  readonly name: N;
  /** The spec path its changes name (`spec.cors`, `spec.objectLock.defaultRetention`). */
  readonly path: string;
  /**
   * The IAM actions of its calls, for the kind's IAM table: the read, the write (whose `calls`
   * are every operation {@link write} may make), and the others the write needs.
   */
  readonly iam: { readonly read: IamAction; readonly write: IamAction; readonly more?: readonly IamAction[] };
  /** CreateBucket sets it (from the spec, or S3's default when unset): create never writes it again. */
  readonly createdWithBucket?: boolean;
  /** Whether the spec manages the setting. @default the spec sets its field */
  managed?(spec: S3BucketSpec): boolean;
  /**
   * The value the spec asks for, in normal form; undefined when it is not managed.
   * @throws Error when a reference it needs was not resolved (the flow resolves every one
   *   first: ../references.ts).
   */
  desired(spec: S3BucketSpec, resolved: ResolvedTargets): NonNullable<V> | undefined;
  /**
   * `want` with the parts the spec leaves unmanaged taken from `have`, the bucket's value: they
   * never count as drift, and a write of the one document carries them as they are.
   * @default want as it is
   */
  completed?(want: NonNullable<V>, have: V): NonNullable<V>;
  /** A short phrase for Events, for a write of `want` over `have` (undefined: not read). */
  describe(want: NonNullable<V>, have: V | undefined): string;
  /** The value as the spec writes it, JSON; undefined for a bucket that has none. */
  toSpec(value: V): JsonValue | undefined;
  /**
   * The inverse of {@link desired}, for `kubeprovisioner export`: the spec fields that ask for
   * `value`, the bucket's as read, so that {@link desired} of them (their references resolved)
   * equals it. No field for a bucket that has none, and none for a value the spec cannot ask
   * for without a write (`omitted` says what it has that the spec cannot express).
   */
  specOf(value: V, refs: SpecRefs): SettingSpec;
  /**
   * A list of rules with ids: a plan names each rule that differs
   * (`spec.lifecycleRules[id=logs]`). `list` gives each rule's id and its spec form.
   */
  readonly items?: {
    readonly idField: string;
    list(value: V): readonly (readonly [string, JsonValue])[];
  };
  /** S3 error codes of a read that mean "the bucket has none". */
  readonly notConfigured: readonly string[];
  /** The normal form of a bucket that has none. */
  readonly none: V;
  /** The setting in normal form. */
  read(s3: BucketCalls): Promise<V>;
  /** Writes `desired`: the whole document, in the calls `iam.write` names. */
  write(s3: BucketCalls, desired: NonNullable<V>): Promise<void>;
}

/** A setting, typed by its definition. */
export function defineSetting<N extends string, V>(def: BucketSettingDef<N, V>): BucketSettingDef<N, V> {
  return def;
}

/** `v` with undefined members dropped, as JSON would have it. */
export function normalJson(v: JsonValue): JsonValue {
  return JSON.parse(JSON.stringify(v)) as JsonValue;
}

/** An object for a plan: its undefined members dropped. */
export function specJson(v: { readonly [key: string]: JsonValue | undefined }): JsonValue {
  const out: { [key: string]: JsonValue } = {};
  for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = x;
  return out;
}

/** Empty strings (S3 may send an empty key ID) become undefined. */
export function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === "" ? undefined : v;
}

/** Orders items by their `id`. */
export function byId(a: { readonly id: string }, b: { readonly id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** `n` and the noun, plural unless `n` is 1: `1 rule`, `2 rules`. */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
