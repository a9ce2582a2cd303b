/**
 * The AwsAccount kind (cluster-scoped): an AWS account the operator works in by assuming an IAM
 * role, and the namespaces whose objects may use it. Managed objects name it in
 * `spec.accountRef`, or their namespace names it in the `compute.cloud.com/account` annotation.
 */
import type { KubeObject, ResourceType } from "../../runtime/kube/object.ts";
import * as s from "../schema/builder.ts";
import { buildCrd, type CustomResourceDefinition } from "../schema/crd.ts";
import { conditionsSchema } from "./conditions.ts";
import type { API_VERSION } from "./group.ts";
import { GROUP, VERSION } from "./group.ts";
import { standardLabels } from "./printer.ts";

/** Where the AwsAccount kind is served. */
export const AwsAccountResource: ResourceType = Object.freeze({
  group: GROUP,
  version: VERSION,
  plural: "awsaccounts",
  kind: "AwsAccount",
  namespaced: false,
});

/** The namespace annotation naming the AwsAccount of the namespace's objects. */
export const ACCOUNT_ANNOTATION = `${GROUP}/account`;

/** The finalizer that keeps an AwsAccount while managed objects still use it. */
export const ACCOUNT_FINALIZER = `${GROUP}/account-in-use`;

/** Condition types and reasons of an AwsAccount, and of the objects that use one. */
export const AccountReason = {
  /** AWS refused AssumeRole or GetCallerIdentity with the assumed credentials. */
  AssumeRoleFailed: "AssumeRoleFailed",
  /** The Secret holding the external ID cannot be read. */
  ExternalIdUnavailable: "ExternalIdUnavailable",
  /** The role is assumed and its identity confirmed. */
  RoleAssumed: "RoleAssumed",
  /** Condition type (and reason) on an AwsAccount being deleted while objects still use it. */
  InUse: "InUse",
  /** An object has no account and `--require-account` is set. */
  AccountRequired: "AccountRequired",
  /** The object's namespace is not among the account's allowedNamespaces. */
  AccountNotAllowed: "AccountNotAllowed",
  /** The account the object names does not exist or is not Ready. */
  AccountNotReady: "AccountNotReady",
  /** The object's resource lives in another account than the one it now resolves to. */
  AccountChanged: "AccountChanged",
} as const;

/**
 * The condition an AwsAccount with `spec.changeEvents` carries, and its reasons; the same
 * reasons name the Events about the operator's own queue (`--change-events`).
 */
export const ChangeEventsReason = {
  /** Condition type. */
  ChangeEvents: "ChangeEvents",
  /** The queue is read; objects are polled every --poll-interval-with-events. */
  Receiving: "Receiving",
  /** The queue cannot be read; objects are polled every --poll-interval. */
  QueueUnreadable: "QueueUnreadable",
  /** spec.changeEvents.queue names no queue. */
  InvalidQueue: "InvalidQueue",
} as const;

/**
 * Values of `spec.adoption`: whether the objects using the account may take over (adopt) existing
 * resources they did not leave themselves.
 */
export const AccountAdoption = {
  /** Objects using the account may adopt, with spec.adoptExisting. */
  Allowed: "Allowed",
  /** They may not (the default): a refused adoption reports AdoptionNotAllowed. */
  Disallowed: "Disallowed",
} as const;

const labelSelectorSchema = s.object(
  {
    matchLabels: s.record(s.string({ description: "Label value.", maxLength: 63 }), {
      description: "Labels the namespace must carry, all of them.",
      maxProperties: 64,
    }),
    matchExpressions: s.array(
      s.object(
        {
          key: s.string({ description: "Label key.", required: true, minLength: 1, maxLength: 317 }),
          operator: s.enumOf(["In", "NotIn", "Exists", "DoesNotExist"], {
            description: "How the label's value relates to values.",
            required: true,
          }),
          values: s.array(s.string({ description: "A label value.", maxLength: 63 }), {
            description: "Values for In and NotIn (at least one); empty for Exists and DoesNotExist.",
            maxItems: 64,
          }),
        },
        {
          description: "One label requirement.",
          validations: [
            {
              rule: "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)",
              message: "In and NotIn need values; Exists and DoesNotExist take none",
            },
          ],
        },
      ),
      { description: "Label requirements the namespace must meet, all of them.", maxItems: 32 },
    ),
  },
  {
    description:
      "Namespaces whose labels match this selector may use the account. An empty selector ({}) " +
      "matches every namespace.",
  },
);

/** Schema of `AwsAccount.spec`. */
export const awsAccountSpecSchema = s.object(
  {
    roleArn: s.string({
      description:
        "The IAM role the operator assumes (sts:AssumeRole) with its own credentials to act in " +
        "this account. Its trust policy must allow the operator's role; see docs/accounts.md.",
      required: true,
      maxLength: 2048,
      pattern: "^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$",
    }),
    externalId: s.string({
      description:
        "External ID passed to AssumeRole (the role's trust policy checks it with the " +
        "sts:ExternalId condition). At most one of externalId and externalIdSecretRef.",
      minLength: 2,
      maxLength: 1224,
      pattern: "^[A-Za-z0-9+=,.@:/_-]+$",
    }),
    externalIdSecretRef: s.object(
      {
        namespace: s.string({
          description: "Namespace of the Secret.",
          required: true,
          minLength: 1,
          maxLength: 63,
        }),
        name: s.string({ description: "Name of the Secret.", required: true, minLength: 1, maxLength: 253 }),
        key: s.string({
          description: "Key in the Secret's data holding the external ID.",
          required: true,
          minLength: 1,
          maxLength: 253,
        }),
      },
      {
        description:
          "The external ID, read from a key of a Secret when the role is assumed. At most one of " +
          "externalId and externalIdSecretRef.",
      },
    ),
    sessionName: s.string({
      description: "Role session name, shown in the account's CloudTrail. @default kubeprovisioner-<name>",
      minLength: 2,
      maxLength: 64,
      pattern: "^[A-Za-z0-9+=,.@_-]+$",
    }),
    sessionDurationSeconds: s.integer({
      description:
        "Lifetime of the assumed credentials, 900-43200 seconds (the role's maximum session " +
        "duration must allow it). The operator assumes the role again before they expire.",
      default: 3600,
      minimum: 900,
      maximum: 43200,
    }),
    changeEvents: s.object(
      {
        queue: s.string({
          description:
            "The SQS queue that EventBridge rules in this account feed with its change events (see " +
            "docs/aws.md, Change events): its URL (https://sqs.<region>.amazonaws.com/<account>/<name>) " +
            "or its ARN (arn:aws:sqs:<region>:<account>:<name>). The operator reads it with this " +
            "account's role and deletes what it reads: give each operator its own queue.",
          required: true,
          minLength: 1,
          maxLength: 1024,
          validations: [
            {
              rule: "self.startsWith('https://') || self.startsWith('http://') || self.matches('^arn:aws[a-z-]*:sqs:')",
              message:
                "queue must be the queue's URL (https://sqs.<region>.amazonaws.com/<account>/<name>) or ARN " +
                "(arn:aws:sqs:<region>:<account>:<name>); a queue name alone says neither account nor region",
            },
          ],
        }),
      },
      {
        description:
          "Change events of this account's resources. While the queue is read, an event enqueues the " +
          "object of the resource it names at once, and the objects using this account are polled only " +
          "every --poll-interval-with-events; the ChangeEvents condition says whether it is read.",
      },
    ),
    adoption: s.enumOf([AccountAdoption.Allowed, AccountAdoption.Disallowed], {
      description:
        "Whether the objects using this account may adopt (spec.adoptExisting) existing buckets, " +
        "queues and instances they did not leave themselves: ones never created by the operator, " +
        "and ones an object of another namespace left (deletionPolicy Retain). An adopted " +
        "resource is deleted with its object (deletionPolicy Delete). Disallowed (default): such " +
        "an adoption is refused (Ready=False, reason AdoptionNotAllowed) with no AWS write; a " +
        "namespace may still take back what its own objects left. Allowed: grant it when every " +
        "namespace allowedNamespaces admits may take over (and delete) every such resource the " +
        "role can reach. See docs/accounts.md, Adoption.",
      default: AccountAdoption.Disallowed,
    }),
    allowedNamespaces: s.object(
      {
        names: s.array(s.string({ description: "A namespace name.", minLength: 1, maxLength: 63 }), {
          description: "Namespaces allowed by name.",
          maxItems: 256,
          listType: "set",
        }),
        selector: labelSelectorSchema,
      },
      {
        description:
          "Which namespaces' objects may use this account: those listed in names and those whose " +
          "labels match selector. Empty (the default) allows none. An object in any other " +
          "namespace is refused (Ready=False, reason AccountNotAllowed) and never causes an AWS call " +
          "with this account's credentials.",
        default: {},
      },
    ),
  },
  {
    description: "How the operator reaches the account, and who may use it.",
    required: true,
    validations: [
      {
        rule: "!(has(self.externalId) && has(self.externalIdSecretRef))",
        message: "set at most one of externalId and externalIdSecretRef",
      },
    ],
  },
);

/** Schema of `AwsAccount.status`. */
export const awsAccountStatusSchema = s.object(
  {
    observedGeneration: s.integer({
      description: "metadata.generation of the spec the operator last checked.",
      format: "int64",
      minimum: 0,
    }),
    conditions: conditionsSchema,
    accountId: s.string({
      description: "The AWS account ID of the assumed identity (GetCallerIdentity).",
      maxLength: 12,
      pattern: "^[0-9]{12}$",
    }),
    assumedArn: s.string({
      description: "ARN of the assumed-role session, as GetCallerIdentity reports it.",
      maxLength: 2048,
    }),
  },
  { description: "Observed state of the account, written by the operator only." },
);

/** Desired state of an AwsAccount, as served (defaults applied). */
export type AwsAccountSpec = s.Static<typeof awsAccountSpecSchema>;
/** Desired state as a client may write it. */
export type AwsAccountSpecInput = s.Input<typeof awsAccountSpecSchema>;
/** Observed state of an AwsAccount. */
export type AwsAccountStatus = s.Static<typeof awsAccountStatusSchema>;
/** `spec.allowedNamespaces`. */
export type AllowedNamespaces = AwsAccountSpec["allowedNamespaces"];
/** A label selector as the API serves it. */
export type LabelSelector = s.Static<typeof labelSelectorSchema>;

/** An AwsAccount object as served by the API server. */
export interface AwsAccount extends KubeObject {
  apiVersion?: typeof API_VERSION;
  kind?: "AwsAccount";
  spec: AwsAccountSpec;
  status?: AwsAccountStatus;
}

/** The generated CustomResourceDefinition of AwsAccount. */
export function awsAccountCrd(): CustomResourceDefinition {
  return buildCrd({
    resource: AwsAccountResource,
    singular: "awsaccount",
    shortNames: ["awsacct"],
    categories: ["kubeprovisioner"],
    labels: standardLabels,
    description:
      "AwsAccount is an AWS account kubeprovisioner manages resources in by assuming " +
      "spec.roleArn. Objects in the namespaces spec.allowedNamespaces allows use it through " +
      "spec.accountRef or their namespace's compute.cloud.com/account annotation.",
    spec: awsAccountSpecSchema,
    status: awsAccountStatusSchema,
    printerColumns: [
      { name: "Role", type: "string", jsonPath: ".spec.roleArn", description: "Role assumed", priority: 1 },
      { name: "AccountID", type: "string", jsonPath: ".status.accountId", description: "AWS account ID" },
      {
        name: "Ready",
        type: "string",
        jsonPath: '.status.conditions[?(@.type=="Ready")].status',
        description: "Status of the Ready condition",
      },
      {
        name: "Age",
        type: "date",
        jsonPath: ".metadata.creationTimestamp",
        description: "Time since creation",
      },
      {
        name: "Reason",
        type: "string",
        jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
        description: "Reason of the Ready condition",
        priority: 1,
      },
    ],
  });
}
