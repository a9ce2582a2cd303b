/**
 * Fields shared by every kind: region, tags, the lifecycle policies, and the common status
 * fields. Each kind spreads these into its own schema, so the rules are identical everywhere.
 */
import * as s from "../schema/builder.ts";
import type { ValidationRule } from "../schema/openapi.ts";
import { conditionsSchema } from "./conditions.ts";
import { RESERVED_TAG_PREFIX } from "./group.ts";

/** AWS region names: `us-east-1`, `eu-central-2`, `us-gov-west-1`, `cn-north-1`. */
export const REGION_PATTERN = "^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$";

/** The `region` field: required and immutable (a resource cannot move between regions). */
export function regionField(what: string) {
  return s.string({
    description:
      `AWS region the ${what} lives in, for example us-east-1. Immutable: AWS cannot move a ` +
      `${what} between regions; create a new object instead.`,
    required: true,
    maxLength: 32,
    pattern: REGION_PATTERN,
    validations: [s.immutable(`region is immutable: the ${what} cannot move between regions`)],
  });
}

/** AWS allows 50 tags per resource; the operator adds its 5 ownership tags. */
export const MAX_USER_TAGS = 45;

/** Characters AWS accepts in tag keys and values on every service this operator manages. */
const TAG_CHARS = "\\p{L}\\p{Z}\\p{N}_.:/=+\\-@";
const TAG_CHARS_TEXT = "letters, digits, spaces and _ . : / = + - @";
const MAX_TAG_KEY = 128;
const MAX_TAG_VALUE = 256;
const TAG_KEY_REGEXP = new RegExp(`^[${TAG_CHARS}]+$`, "u");
const TAG_VALUE_REGEXP = new RegExp(`^[${TAG_CHARS}]*$`, "u");

/**
 * The rules of one user tag key, each as a CEL rule over `k` for the CRD and a check for the
 * tags the operator is configured with (`--default-tags`), so both refuse the same keys.
 */
const TAG_KEY_RULES: readonly { cel: string; ok: (k: string) => boolean; message: string }[] = [
  {
    cel: `size(k) >= 1 && size(k) <= ${MAX_TAG_KEY}`,
    ok: (k) => k.length >= 1 && k.length <= MAX_TAG_KEY,
    message: `tag keys must be 1 to ${MAX_TAG_KEY} characters`,
  },
  {
    cel: `k.matches(r'^[${TAG_CHARS}]+$')`,
    ok: (k) => TAG_KEY_REGEXP.test(k),
    message: `tag keys may contain only ${TAG_CHARS_TEXT}`,
  },
  {
    cel: "!k.startsWith('aws:')",
    ok: (k) => !k.startsWith("aws:"),
    message: "tag keys starting with aws: are reserved by AWS",
  },
  {
    cel: `!k.startsWith('${RESERVED_TAG_PREFIX}')`,
    ok: (k) => !k.startsWith(RESERVED_TAG_PREFIX),
    message: `tag keys starting with ${RESERVED_TAG_PREFIX} are reserved for the operator's ownership tags`,
  },
];

/** Why `key` cannot be a user tag key, or undefined when it can (the CRD's rules). */
export function tagKeyProblem(key: string): string | undefined {
  return TAG_KEY_RULES.find((r) => !r.ok(key))?.message;
}

/** Why `value` cannot be a tag value, or undefined when it can (the CRD's rules). */
export function tagValueProblem(value: string): string | undefined {
  if (value.length > MAX_TAG_VALUE) return `tag values must be at most ${MAX_TAG_VALUE} characters`;
  if (!TAG_VALUE_REGEXP.test(value)) return `tag values may contain only ${TAG_CHARS_TEXT}`;
  return undefined;
}

/**
 * The `tags` field, with the strictest limits shared by EC2, S3 and SQS: at most 45 tags (AWS allows
 * 50 per resource and the operator adds 5 ownership tags), keys
 * of 1-128 and values of at most 256 characters, no `aws:` keys (reserved by AWS) and no keys
 * under {@link RESERVED_TAG_PREFIX} (the operator's ownership tags).
 */
export function tagsField(what: string) {
  return tagMapField(
    `Tags applied to the ${what}, in addition to the operator's ownership tags and the operator's ` +
      `default tags (--default-tags; a key set here wins). Mutable and authoritative: the operator ` +
      `adds, changes and removes tags on the ${what} until they match; exempt are aws: tags, its own ` +
      `ownership tags and the prefixes of --ignore-tag-prefixes (never removed or overwritten). ${TAG_LIMITS_TEXT}`,
  );
}

/** What every tag map allows, as its description says it. */
const TAG_LIMITS_TEXT =
  `At most 45 tags (AWS allows 50 and the operator adds 5 ownership tags); ` +
  `keys 1-${MAX_TAG_KEY} characters, values at most ${MAX_TAG_VALUE}; ${TAG_CHARS_TEXT}.`;

/** A map of AWS tags with the key and value rules AWS sets, described by `description`. */
function tagMapField(description: string) {
  return s.record(
    s.string({
      description: `Tag value, at most ${MAX_TAG_VALUE} characters.`,
      maxLength: MAX_TAG_VALUE,
      pattern: `^[${TAG_CHARS}]*$`,
    }),
    {
      description,
      maxProperties: MAX_USER_TAGS,
      validations: TAG_KEY_RULES.map((r) => ({ rule: `self.all(k, ${r.cel})`, message: r.message })),
    },
  );
}

/** `volumeTags` of an Ec2Instance: the tags of its EBS volumes, apart from the instance's tags. */
export function volumeTagsField() {
  return tagMapField(
    "Tags of the instance's EBS volumes (the root volume and storage.additionalVolumes), instead " +
      "of spec.tags, with the ownership tags and the default tags (--default-tags; a key set here " +
      "wins). Omit: the volumes get the instance's tags at launch and are never read or tagged " +
      "again. Set: written at launch (TagSpecifications, ResourceType volume) and, mutable and " +
      "authoritative like spec.tags, put back on those volumes on every poll (DescribeVolumes, " +
      "CreateTags, DeleteTags); removing it leaves the volumes' tags as they are. " +
      TAG_LIMITS_TEXT,
  );
}

/** `deletionPolicy`: what happens to the AWS resource when the object is deleted. */
export function deletionPolicyField(what: string) {
  return s.enumOf(["Delete", "Retain"], {
    description:
      `What happens to the ${what} in AWS when this object is deleted. Delete (default): the ` +
      `operator deletes the ${what} and releases the object once it is gone. Retain: the ` +
      `object is released at once and the ${what} is left in AWS untouched. Mutable: the value ` +
      `at the time of deletion counts.`,
    default: "Delete",
  });
}

/** `adoptExisting`: take over a resource that exists but carries no ownership tag of this object. */
export function adoptExistingField(how: string) {
  return s.boolean({
    description:
      `Adopt an existing AWS resource instead of failing on it. ${how} Without this switch such a ` +
      `resource is never touched: the object reports Ready=False with reason NotOwned. A ` +
      `resource another existing object owns is never adopted (OwnedByAnotherObject). One an ` +
      `object of this namespace left (deletionPolicy Retain) is adopted on this switch alone; every other ` +
      `other (never created by the operator, or left by another namespace's object) only when the ` +
      `cluster admin granted adoption: the AwsAccount the object uses (its spec.adoption), or for ` +
      `the operator's own identity the install (--adoption, --adoption-namespaces; none by ` +
      `default), else Ready=False with reason AdoptionNotAllowed and nothing written to AWS. On ` +
      `adoption the operator writes its ownership tags, and from then on the resource is managed ` +
      `(and, with deletionPolicy Delete, deleted) like one it created. Mutable.`,
    default: false,
  });
}

/** `onDeletedOutOfBand`: what to do when the AWS resource disappears behind the operator's back. */
export function onDeletedOutOfBandField(what: string) {
  return s.enumOf(["Recreate", "Report"], {
    description:
      `What to do when the ${what} is deleted in AWS by someone else. Recreate (default): create ` +
      `it again and emit a Warning event. Report: only set Ready=False with reason ` +
      `DeletedOutOfBand and emit a Warning event. Mutable.`,
    default: "Recreate",
  });
}

/** Values of `spec.managementPolicy`. */
export const MANAGEMENT_POLICIES = ["Full", "ObserveOnly"] as const;

/** `managementPolicy`: whether the operator manages the resource or only reads it. */
export function managementPolicyField(what: string, identity: string) {
  return s.enumOf(MANAGEMENT_POLICIES, {
    description:
      `Whether the operator manages the ${what} or only reads it. Full (default): it creates, ` +
      `repairs and deletes the ${what} as the rest of the spec says. ObserveOnly: ${identity} ` +
      `names an existing ${what}, and the operator only reads it and reports it in status ` +
      `(Ready=False with reason NotFound while it does not exist); it never creates, tags, ` +
      `changes or deletes it, adds no finalizer, and the other spec fields are not applied. ` +
      `Mutable: ObserveOnly to Full takes the ${what} over under the adoption rules ` +
      `(adoptExisting, and the cluster admin's grant for a ${what} the object did not leave ` +
      `itself); Full to ObserveOnly releases it without deleting it and removes the ` +
      `finalizer (the ownership tags stay on the ${what}).`,
    default: "Full",
  });
}

/** Values of `spec.driftPolicy`. */
export const DRIFT_POLICIES = ["Repair", "Report"] as const;

/** `driftPolicy`: whether the operator repairs drift or only reports it. */
export function driftPolicyField(what: string) {
  return s.enumOf(DRIFT_POLICIES, {
    description:
      `What the operator does when the ${what} differs from the spec. Repair (default): it puts ` +
      `the ${what} back (an Updated event names what changed). Report: it makes no AWS write for ` +
      `the difference; status.drift lists each differing spec path with the desired and observed ` +
      `values, when it was first seen and, when a change event says so, who made the change; the ` +
      `Drifted condition is True and one event is emitted per newly drifted path. Adopting a ` +
      `${what} under Report writes only the ownership tags. Mutable: switching to Repair repairs.`,
    default: "Repair",
  });
}

/** Values of `spec.changePolicy`. */
export const CHANGE_POLICIES = ["Auto", "Approve"] as const;

/** `changePolicy`: whether changes are applied at once or wait for approval. */
export function changePolicyField(what: string) {
  return s.enumOf(CHANGE_POLICIES, {
    description:
      `Whether the operator applies changes to the ${what} at once. Auto (default): yes. Approve: ` +
      `it writes the changes it would make to status.pendingChanges with a hash, sets ` +
      `ChangesPending=True, and makes no AWS write (creation included) until the annotation ` +
      `compute.cloud.com/approved-changes carries that hash. An approval whose hash no longer ` +
      `matches (the spec or the ${what} moved since) is refused (reason StaleApproval) and the new ` +
      `plan is shown. Deletion is not gated: deleting the object is the decision (use ` +
      `deletionPolicy Retain to keep the ${what}). Mutable.`,
    default: "Auto",
  });
}

/**
 * A rule on a spec that makes the property `field` required unless the object only observes its
 * resource (`managementPolicy: ObserveOnly`): the fields a create needs. Reported on the property
 * as "Required value", as a required property is.
 */
export function requiredToManage(field: string): ValidationRule {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field)) throw new Error(`not a simple property name: ${field}`);
  return {
    rule: `self.managementPolicy == 'ObserveOnly' || has(self.${field})`,
    message: `${field} is required unless managementPolicy is ObserveOnly`,
    reason: "FieldValueRequired",
    fieldPath: `.${field}`,
  };
}

/** The status field with the tags an observed resource carries. */
function observedTagsField() {
  return s.record(s.string({ description: "Tag value.", maxLength: 256 }), {
    description:
      "Every tag the resource carries in AWS, as last read; reported only while " +
      "spec.managementPolicy is ObserveOnly.",
    maxProperties: 64,
  });
}

/**
 * A reference to another object of `kind` in the referring object's namespace, by name (an
 * SqsQueue's dead-letter queue, a bucket's notification queue, replication destination or log
 * target, the buckets a grant names). `opts` describes the reference itself.
 */
export function namespacedRefField<const O extends s.ObjectOptions<{ name: string }>>(
  kind: "S3Bucket" | "SqsQueue",
  opts: O,
) {
  return s.object(
    {
      name: s.string({
        description: `Name of an ${kind} object in this namespace.`,
        required: true,
        minLength: 1,
        maxLength: 253,
      }),
    },
    opts,
  );
}

/**
 * The rule on a list of references (items holding a {@link namespacedRefField} at `path`, e.g.
 * `name` or `bucketRef.name`) that names each object at most once, reported with `message`.
 */
export function eachReferencedOnce(path: string, message: string): ValidationRule {
  if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(path))
    throw new Error(`not a field path: ${path}`);
  return { rule: `self.all(a, self.exists_one(b, b.${path} == a.${path}))`, message };
}

/**
 * `accountRef`: the AwsAccount the object's resource lives in. Unset: the namespace's
 * `compute.cloud.com/account` annotation, else the operator's own credentials.
 */
export function accountRefField() {
  return s.object(
    {
      name: s.string({
        description: "Name of the AwsAccount (cluster-scoped).",
        required: true,
        minLength: 1,
        maxLength: 253,
        validations: [s.immutable("accountRef is immutable: a resource cannot move between accounts")],
      }),
    },
    {
      description:
        "The AwsAccount whose role the operator assumes to manage this resource. Unset: the " +
        "account named by the namespace's compute.cloud.com/account annotation, else the " +
        "operator's own credentials. The account must allow this namespace (its " +
        "allowedNamespaces), else the object is refused with reason AccountNotAllowed. Immutable once set.",
    },
  );
}

/** The rule on a kind's spec that keeps a set `accountRef` from being removed. */
export const accountRefKept = {
  rule: "!has(oldSelf.accountRef) || has(self.accountRef)",
  message: "accountRef is immutable: it cannot be removed once set",
  fieldPath: ".accountRef",
} as const;

/** Status fields every kind carries. */
export function commonStatusFields() {
  return {
    accountId: s.string({
      description:
        "The AWS account ID the resource lives in: the AwsAccount's (spec.accountRef or the " +
        "namespace's annotation), or the operator's own.",
      maxLength: 12,
      pattern: "^[0-9]{12}$",
    }),
    observedGeneration: s.integer({
      description:
        "metadata.generation of the spec the operator last reconciled. When it is behind " +
        "metadata.generation, the status describes an older spec.",
      format: "int64",
      minimum: 0,
    }),
    conditions: conditionsSchema,
    createToken: s.string({
      description:
        "Idempotency token of the pending or last create, recorded before the AWS create call so " +
        "that a retry after a crash reuses it. Derived from metadata.uid and createAttempt.",
      maxLength: 64,
    }),
    createRequestedAt: s.dateTime({
      description:
        "When the operator recorded createToken (renewed when a create is retried much later). " +
        "Bounds the window in which an S3 bucket that is not tagged yet can be this object's own.",
    }),
    createAttempt: s.integer({
      description:
        "How many times the operator has had to create the AWS resource for this object (1 after " +
        "the first create; incremented when it is recreated after an out-of-band deletion).",
      minimum: 0,
    }),
    observedTags: observedTagsField(),
    drift: s.array(driftEntrySchema, {
      description:
        "Under spec.driftPolicy Report: each spec path where the resource differs from the spec, " +
        `at most ${MAX_DRIFT_ENTRIES} (the rest are counted in the Drifted condition's message). ` +
        "Written only when the set of paths or their values change.",
      maxItems: MAX_DRIFT_ENTRIES,
    }),
    pendingChanges: pendingChangesSchema,
    appliedChanges: s.string({
      description:
        "Under spec.changePolicy Approve: the hash of the changes last approved and applied. An " +
        "approval annotation carrying it asks for nothing more; one carrying another hash than " +
        "the current plan's is refused as stale.",
      maxLength: 64,
    }),
    lastHandledReconcileAt: s.string({
      description:
        "The value of the compute.cloud.com/reconcile-requested-at annotation that the operator " +
        "last handled: a value other than this one asks for one reconcile now, which records it " +
        "here.",
      // Any annotation value fits: Kubernetes allows 256 KiB for all of an object's annotations.
      maxLength: MAX_ANNOTATIONS_BYTES,
    }),
  };
}

/** The most entries status.drift and status.pendingChanges.changes hold. */
export const MAX_DRIFT_ENTRIES = 32;

/** The longest value (as JSON) a drift entry or pending change shows; longer ones are summarized. */
export const MAX_SHOWN_VALUE_BYTES = 1024;

/** One drifted path in status.drift. */
const driftEntrySchema = s.object(
  {
    path: s.string({
      description: "The spec path that differs (spec.versioning, spec.tags.team).",
      required: true,
      maxLength: 512,
    }),
    desired: s.json({ description: "The value the spec asks for (absent: the spec asks for none)." }),
    observed: s.json({ description: "The value AWS has (absent: AWS has none)." }),
    since: s.dateTime({ description: "When the operator first saw this difference.", required: true }),
    changedBy: s.string({
      description: "Who made the change, as a change event (CloudTrail userIdentity) named them.",
      maxLength: 2048,
    }),
    changeEvent: s.string({
      description: "The AWS API call that made the change (CloudTrail eventName).",
      maxLength: 128,
    }),
    changedAt: s.dateTime({ description: "When that call was made (CloudTrail eventTime)." }),
  },
  { description: "One spec path where the resource differs from the spec." },
);

/** One change in status.pendingChanges. */
const pendingChangeSchema = s.object(
  {
    path: s.string({
      description: "The spec path the change concerns; spec for a creation.",
      required: true,
      maxLength: 512,
    }),
    observed: s.json({ description: "The value AWS has (absent: none)." }),
    desired: s.json({ description: "The value applying sets (absent: applying removes it)." }),
    actions: s.array(s.string({ description: "An IAM action.", maxLength: 128 }), {
      description: "The IAM actions applying the change calls, in order.",
      maxItems: 16,
    }),
    disruption: s.enumOf(["none", "restart", "replace", "refused"], {
      description:
        "What applying does to the resource: none, restart (EC2 stop and start), replace, or refused.",
      required: true,
    }),
    reason: s.string({
      description: "Why a refused change is refused (a condition reason).",
      maxLength: 128,
    }),
    message: s.string({ description: "Why a refused change is refused.", maxLength: 1024 }),
  },
  { description: "One change the operator would make." },
);

/** status.pendingChanges: the plan held for approval. */
const pendingChangesSchema = s.object(
  {
    hash: s.string({
      description:
        "The plan's hash: approve it by setting the annotation compute.cloud.com/approved-changes to this value.",
      required: true,
      maxLength: 64,
    }),
    changes: s.array(pendingChangeSchema, {
      description: `The changes, in the order they are applied (at most ${MAX_DRIFT_ENTRIES} shown).`,
      maxItems: MAX_DRIFT_ENTRIES,
    }),
    total: s.integer({
      description: "How many changes the plan holds (more than listed when truncated).",
      minimum: 0,
    }),
    restarts: s.integer({ description: "How many of them restart the resource.", minimum: 0 }),
    refused: s.integer({ description: "How many of them the operator refuses.", minimum: 0 }),
  },
  {
    description:
      "Under spec.changePolicy Approve: the changes waiting for approval. Absent when nothing waits.",
  },
);

/** What Kubernetes allows all of an object's annotations together, keys and values (256 KiB). */
const MAX_ANNOTATIONS_BYTES = 262_144;

/** The IAM policy language versions. */
const POLICY_VERSIONS = ["2012-10-17", "2008-10-17"] as const;
const CEL_POLICY_VERSIONS = `[${POLICY_VERSIONS.map((v) => `'${v}'`).join(", ")}]`;

/** One statement of an IAM policy document. */
const policyStatementSchema = s.object(
  {
    Sid: s.string({ description: "Statement ID, unique within the policy.", maxLength: 128 }),
    Effect: s.enumOf(["Allow", "Deny"], { description: "Allow or Deny.", required: true }),
    Principal: s.json({ description: 'Who the statement applies to: "*" or a map such as {AWS: [arn]}.' }),
    NotPrincipal: s.json({ description: "Everyone except these principals." }),
    Action: s.json({ description: "An action such as s3:GetObject, or a list of them." }),
    NotAction: s.json({ description: "Every action except these." }),
    Resource: s.json({ description: "A resource ARN, or a list of them." }),
    NotResource: s.json({ description: "Every resource except these." }),
    Condition: s.json({ description: "Condition operators and their keys, as IAM defines them." }),
  },
  {
    description:
      "An IAM policy statement. Principal, Action, Resource and Condition keep the forms IAM " +
      "accepts (a string or a list); AWS judges them and rejects an invalid statement.",
  },
);

/**
 * A resource policy (S3 bucket policy, SQS queue policy) as a structured IAM policy document;
 * `description` says whose policy it is and how it is enforced.
 */
export function iamPolicyField(description: string) {
  return s.object(
    {
      // Checked by a CEL rule rather than an OpenAPI enum, so the refusal of a timestamp (what YAML
      // 1.1 readers make of an unquoted date) can say to quote it: the API server reports only the
      // enum's list and skips the CEL rules when the enum fails.
      Version: s.string({
        description:
          'Policy language version: "2012-10-17" (the current one) or "2008-10-17". A string: ' +
          'write it quoted (Version: "2012-10-17"), since YAML 1.1 readers (kubectl apply -k, ' +
          "kustomize, Argo CD, Flux) turn an unquoted date into a timestamp.",
        default: "2012-10-17",
        maxLength: 32,
        validations: [
          {
            rule: `self in ${CEL_POLICY_VERSIONS}`,
            messageExpression:
              "self.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T') ? 'Version arrived as the timestamp ' + " +
              "self + ': YAML 1.1 readers (kubectl apply -k, kustomize, Argo CD, Flux) read an " +
              "unquoted date as one. Quote it: Version: \"' + self.substring(0, 10) + '\"' : " +
              `'Version must be ${POLICY_VERSIONS.map((v) => `"${v}"`).join(" or ")}, not "' + self + '"'`,
          },
        ],
      }),
      Id: s.string({ description: "Optional policy identifier.", maxLength: 128 }),
      Statement: s.array(policyStatementSchema, {
        description: "The statements; at least one.",
        required: true,
        minItems: 1,
        maxItems: 100,
      }),
    },
    { description },
  );
}

/** A ConfigMap or Secret name of `writeOutputsTo`: a DNS subdomain name, checked by CEL. */
function outputNameField(field: string, description: string) {
  return s.string({
    description,
    minLength: 1,
    maxLength: 253,
    validations: [
      {
        rule: "!format.dns1123Subdomain().validate(self).hasValue()",
        message:
          `${field} must be a DNS subdomain name: lower-case letters, digits, '-' and '.', ` +
          "starting and ending with a letter or digit",
      },
    ],
  });
}

/**
 * `writeOutputsTo`: the ConfigMap and/or Secret the operator writes the resource's identifiers
 * into, for applications to read with `envFrom`. `keys` are the keys of the kind, each with what
 * it holds.
 */
export function writeOutputsToField(what: string, keys: readonly (readonly [key: string, holds: string])[]) {
  const list = keys.map(([k, holds]) => `${k} (${holds})`).join(", ");
  return s.object(
    {
      configMapName: outputNameField(
        "configMapName",
        "Name of the ConfigMap, in this object's namespace: a DNS subdomain name (lower-case " +
          "letters, digits, '-' and '.', at most 253 characters). Mutable: on a change the " +
          "operator deletes the ConfigMap it wrote under the old name.",
      ),
      secretName: outputNameField(
        "secretName",
        "Name of a Secret (type Opaque), in this object's namespace, holding the same keys as the " +
          "ConfigMap, for values kept out of ConfigMaps: a DNS subdomain name. Written only in the " +
          "namespaces the operator is allowed to write Secrets in (--output-secret-namespaces); " +
          "elsewhere the object reports Ready=False with reason OutputNotAllowed. Mutable: on a " +
          "change the operator deletes the Secret it wrote under the old name.",
      ),
    },
    {
      description:
        `Write the ${what}'s identifiers into a ConfigMap and/or a Secret owned by this object, ` +
        `for pods to read with envFrom: ${list}. A key whose value AWS does not report (yet) is ` +
        `left out. Each is rewritten when a value changes and repaired when someone else edits or ` +
        `deletes it; it carries the label compute.cloud.com/managed-by: kubeprovisioner and an ` +
        `ownerReference to this object, so it is garbage-collected with it. An existing ConfigMap ` +
        `or Secret of that name that this object does not own is never overwritten: the object ` +
        `reports Ready=False with reason OutputConflict. Unset: none; removing a name deletes ` +
        `what the operator wrote under it. Mutable.`,
      validations: [
        {
          rule: "has(self.configMapName) || has(self.secretName)",
          message: "writeOutputsTo needs configMapName, secretName or both",
        },
      ],
    },
  );
}

/**
 * The spec fields every managed kind declares, each through its field function above: each
 * kind's schema holds them (with its own descriptions), so their type is derived from here.
 */
type ManagedSpecFields = {
  region: ReturnType<typeof regionField>;
  tags: ReturnType<typeof tagsField>;
  accountRef: ReturnType<typeof accountRefField>;
  deletionPolicy: ReturnType<typeof deletionPolicyField>;
  adoptExisting: ReturnType<typeof adoptExistingField>;
  onDeletedOutOfBand: ReturnType<typeof onDeletedOutOfBandField>;
  writeOutputsTo: ReturnType<typeof writeOutputsToField>;
  managementPolicy: ReturnType<typeof managementPolicyField>;
  driftPolicy: ReturnType<typeof driftPolicyField>;
  changePolicy: ReturnType<typeof changePolicyField>;
};

/**
 * Spec fields every managed kind shares, as served. `managementPolicy` may be absent all the
 * same (an object stored before the field existed): absent means Full.
 */
export type ManagedSpec = Omit<
  s.StaticObject<ManagedSpecFields>,
  "managementPolicy" | "driftPolicy" | "changePolicy"
> &
  Partial<Pick<s.StaticObject<ManagedSpecFields>, "managementPolicy" | "driftPolicy" | "changePolicy">>;

/** Status fields every managed kind shares: {@link commonStatusFields}, and the kind's `state`. */
export type ManagedStatus = s.StaticObject<ReturnType<typeof commonStatusFields>> & {
  state?: string | undefined;
};
