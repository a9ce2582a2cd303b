/**
 * The IAM policies of config/iam, rendered from the kind registry and the features' IAM (the same
 * actions as the IAM table of docs/aws.md):
 *
 * - `policy.json` allows every action a kind's driver or a feature (change events, bulk tag
 *   reads, AwsAccounts) calls, on any resource unless a grant below narrows it. Its resources
 *   name no region, because one operator serves every region its objects name.
 * - `policy-tag-scoped.json` allows the same actions, and confines those that IAM can confine by
 *   tag to resources carrying the operator's `managed-by` ownership tag.
 *
 * Which action supports which condition key is AWS's to say (the Service Authorization
 * Reference); {@link TAG_SCOPED_GRANTS} records it for the actions the drivers call. Actions it
 * does not name are allowed on any resource in both policies. Pure: returns text.
 */
import { MANAGED_BY_VALUE, OWNERSHIP_TAGS } from "../api/v1/group.ts";
import type { IamAction, IamFeature, KindModule } from "../reconcilers/common/kind.ts";

/** Path of the policy that allows every action on any resource, relative to the repository root. */
export const IAM_POLICY = "config/iam/policy.json";
/** Path of the policy confined by the ownership tag, relative to the repository root. */
export const IAM_POLICY_TAG_SCOPED = "config/iam/policy-tag-scoped.json";

/** A condition block: operator → condition key → value(s). */
export type PolicyCondition = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** One statement of an identity-based policy; every statement here allows. */
export interface PolicyStatement {
  readonly Sid: string;
  readonly Effect: "Allow";
  readonly Action: readonly string[];
  readonly Resource: string | readonly string[];
  readonly Condition?: PolicyCondition;
}

/** An IAM policy document. */
export interface PolicyDocument {
  readonly Version: "2012-10-17";
  readonly Statement: readonly PolicyStatement[];
}

/** `aws:ResourceTag`: the resource acted on already carries the operator's managed-by tag. */
const RESOURCE_TAGGED: PolicyCondition = {
  StringEquals: { [`aws:ResourceTag/${OWNERSHIP_TAGS.managedBy}`]: MANAGED_BY_VALUE },
};
/** `aws:RequestTag`: the call itself puts the managed-by tag on the resource it creates. */
const REQUEST_TAGGED: PolicyCondition = {
  StringEquals: { [`aws:RequestTag/${OWNERSHIP_TAGS.managedBy}`]: MANAGED_BY_VALUE },
};

/** The roles AwsAccounts may name for the generated policies: `kubeprovisioner-*`, in any account. */
export const TENANT_ROLES = "arn:aws:iam::*:role/kubeprovisioner-*";

const EC2_INSTANCE = "arn:aws:ec2:*:*:instance/*";
const EC2_VOLUME = "arn:aws:ec2:*:*:volume/*";

/** A statement of the tag-scoped policy, before it is narrowed to one kind's actions. */
export interface ScopedGrant {
  /** Appended to the kind's name to form the statement's Sid (letters and digits only). */
  readonly sid: string;
  readonly actions: readonly string[];
  readonly resource: string | readonly string[];
  readonly condition?: PolicyCondition;
  /** The condition holds in the policy that is not tag-scoped too. */
  readonly always?: boolean;
  /**
   * Only for this kind (its `resource.kind`) or feature (its `sid`); unset: every kind that calls
   * the actions, and no feature (a feature acts on resources the user names, which carry no
   * ownership tag).
   */
  readonly kind?: string;
}

/**
 * The statements of the tag-scoped policy, per AWS's Service Authorization Reference:
 *
 * - EC2: RunInstances takes `aws:RequestTag` on the instance and volumes it creates (the
 *   driver tags both in `TagSpecifications`), but the other resources it names are not the
 *   operator's or carry no tag: the image, snapshot, subnet, network interface, security group
 *   and key pair it launches from, the placement group of `placement.groupName`, the Dedicated
 *   Host of `placement.tenancy: host`, and the Spot Instance request it creates for
 *   `marketOptions` (untagged). Tagging at launch is CreateTags with `ec2:CreateAction`; the
 *   actions on an existing instance take `aws:ResourceTag`. The Describe* calls have no
 *   resource-level permissions.
 * - SQS: CreateQueue, and the TagQueue it implies when a queue is created with tags, take
 *   `aws:RequestTag`; the actions on a queue take `aws:ResourceTag`. The reads stay unscoped:
 *   the driver looks a queue up by name (GetQueueUrl) before creating it, and reads the tags of
 *   a queue to tell whose it is, so they must answer for queues that are not the operator's.
 * - S3: not scoped. A general purpose bucket evaluates `aws:ResourceTag` only once ABAC is
 *   enabled on it, and the driver tags a bucket after CreateBucket, so neither key confines it.
 * - EC2 volumes: the volumeTags repair's CreateTags and DeleteTags take `aws:ResourceTag` on a
 *   volume carrying the managed-by tag (written at launch).
 * - iam:PassRole, in both policies: Ec2Instance only to EC2, for instance profiles; S3Bucket only
 *   to S3, for the replication role.
 * - KMS, in both policies, for a volume's kmsKeyId: EC2 uses the key on the caller's behalf, so
 *   kms:CreateGrant only for grants to an AWS service (`kms:GrantIsForAWSResource`) and the key
 *   operations only through EC2 (`kms:ViaService`). For a change-event queue encrypted with a
 *   customer managed key: kms:Decrypt only through SQS (the operator only receives from it).
 * - AwsAccounts, in both policies: sts:AssumeRole and sts:TagSession only on roles named
 *   `kubeprovisioner-*`, in any account (a role name is the one thing IAM lets confine them by
 *   before the role is assumed).
 */
export const TAG_SCOPED_GRANTS: readonly ScopedGrant[] = [
  {
    sid: "LaunchTagged",
    actions: ["ec2:RunInstances"],
    resource: [EC2_INSTANCE, EC2_VOLUME],
    condition: REQUEST_TAGGED,
  },
  {
    sid: "LaunchFrom",
    actions: ["ec2:RunInstances"],
    resource: [
      "arn:aws:ec2:*::image/*",
      "arn:aws:ec2:*::snapshot/*",
      "arn:aws:ec2:*:*:subnet/*",
      "arn:aws:ec2:*:*:network-interface/*",
      "arn:aws:ec2:*:*:security-group/*",
      "arn:aws:ec2:*:*:key-pair/*",
      "arn:aws:ec2:*:*:placement-group/*",
      "arn:aws:ec2:*:*:dedicated-host/*",
      "arn:aws:ec2:*:*:spot-instances-request/*",
    ],
  },
  {
    sid: "TagOnLaunch",
    actions: ["ec2:CreateTags"],
    resource: [EC2_INSTANCE, EC2_VOLUME],
    condition: { StringEquals: { "ec2:CreateAction": "RunInstances" } },
  },
  {
    sid: "Owned",
    actions: [
      "ec2:TerminateInstances",
      "ec2:StopInstances",
      "ec2:StartInstances",
      "ec2:ModifyInstanceAttribute",
      "ec2:ModifyInstanceMetadataOptions",
      "ec2:MonitorInstances",
      "ec2:UnmonitorInstances",
      "ec2:ModifyInstanceCreditSpecification",
      "ec2:AssociateIamInstanceProfile",
      "ec2:ReplaceIamInstanceProfileAssociation",
      "ec2:CreateTags",
      "ec2:DeleteTags",
    ],
    resource: EC2_INSTANCE,
    condition: RESOURCE_TAGGED,
  },
  {
    sid: "VolumeTags",
    actions: ["ec2:CreateTags", "ec2:DeleteTags"],
    resource: EC2_VOLUME,
    condition: RESOURCE_TAGGED,
  },
  {
    sid: "PassRole",
    actions: ["iam:PassRole"],
    resource: "*",
    condition: { StringEquals: { "iam:PassedToService": "ec2.amazonaws.com" } },
    always: true,
    kind: "Ec2Instance",
  },
  {
    sid: "KmsGrant",
    actions: ["kms:CreateGrant"],
    resource: "*",
    condition: { Bool: { "kms:GrantIsForAWSResource": "true" } },
    always: true,
    kind: "Ec2Instance",
  },
  {
    sid: "KmsViaEc2",
    actions: ["kms:Decrypt", "kms:DescribeKey", "kms:GenerateDataKeyWithoutPlaintext", "kms:ReEncrypt*"],
    resource: "*",
    condition: { StringLike: { "kms:ViaService": "ec2.*.amazonaws.com" } },
    always: true,
    kind: "Ec2Instance",
  },
  {
    sid: "PassRole",
    actions: ["iam:PassRole"],
    resource: "*",
    condition: { StringEquals: { "iam:PassedToService": "s3.amazonaws.com" } },
    always: true,
    kind: "S3Bucket",
  },
  {
    sid: "CreateTagged",
    actions: ["sqs:CreateQueue", "sqs:TagQueue"],
    resource: "arn:aws:sqs:*:*:*",
    condition: REQUEST_TAGGED,
  },
  {
    sid: "Owned",
    actions: ["sqs:DeleteQueue", "sqs:SetQueueAttributes", "sqs:TagQueue", "sqs:UntagQueue"],
    resource: "arn:aws:sqs:*:*:*",
    condition: RESOURCE_TAGGED,
  },
  {
    sid: "Kms",
    actions: ["kms:Decrypt"],
    resource: "*",
    condition: { StringLike: { "kms:ViaService": "sqs.*.amazonaws.com" } },
    always: true,
    kind: "ChangeEvents",
  },
  {
    sid: "Roles",
    actions: ["sts:AssumeRole", "sts:TagSession"],
    resource: TENANT_ROLES,
    always: true,
    kind: "AwsAccounts",
  },
];

/** A kind or a feature, as the policy sees it: a Sid prefix and the actions it calls. */
interface PolicyPart {
  /** The kind's `resource.kind` or the feature's `sid`: the Sid prefix, and what a grant's `kind` names. */
  readonly key: string;
  readonly iam: readonly IamAction[];
  readonly feature: boolean;
}

function statement(part: PolicyPart, grant: ScopedGrant, actions: readonly string[]): PolicyStatement {
  return {
    Sid: `${part.key}${grant.sid}`,
    Effect: "Allow",
    Action: actions,
    Resource: grant.resource,
    ...(grant.condition !== undefined ? { Condition: grant.condition } : {}),
  };
}

/**
 * The policy for `kinds` and `features`: one statement per kind and feature with its actions on
 * any resource, or, with `tagScoped`, the grants of `grants` for the kind's actions and one
 * statement with the rest. Grants marked `always` apply in both; a feature takes only the grants
 * that name it.
 */
export function iamPolicy(
  kinds: readonly KindModule[],
  tagScoped: boolean,
  grants: readonly ScopedGrant[] = TAG_SCOPED_GRANTS,
  features: readonly IamFeature[] = [],
): PolicyDocument {
  const parts: PolicyPart[] = [
    ...kinds.map((k) => ({ key: k.resource.kind, iam: k.iam, feature: false })),
    ...features.map((f) => ({ key: f.sid, iam: f.iam, feature: true })),
  ];
  const statements: PolicyStatement[] = [];
  for (const part of parts) {
    // Every action the part calls, in registry order, each once.
    const actions = [...new Set(part.iam.map((a) => a.action))];
    const applied = grants.filter(
      (g) =>
        (tagScoped || g.always === true) && (g.kind === part.key || (g.kind === undefined && !part.feature)),
    );
    const covered = new Set(applied.flatMap((g) => g.actions).filter((a) => actions.includes(a)));
    const rest = actions.filter((a) => !covered.has(a));
    if (rest.length > 0) statements.push({ Sid: part.key, Effect: "Allow", Action: rest, Resource: "*" });
    for (const grant of applied) {
      const granted = grant.actions.filter((a) => actions.includes(a));
      if (granted.length > 0) statements.push(statement(part, grant, granted));
    }
  }
  return { Version: "2012-10-17", Statement: statements };
}

/** The policy as the file holds it: JSON with two-space indentation and a final newline. */
export function renderIamPolicy(
  kinds: readonly KindModule[],
  tagScoped: boolean,
  features: readonly IamFeature[] = [],
): string {
  return JSON.stringify(iamPolicy(kinds, tagScoped, TAG_SCOPED_GRANTS, features), null, 2) + "\n";
}
