/**
 * What the operator needs from IAM, as the kind registry records it: each kind's and each
 * feature's actions with the API operations that need them. The IAM table of docs/aws.md and the
 * policies of config/iam are generated from these records (src/gen), and a failed call's
 * AccessDenied names the action from them (./flow/failure.ts).
 */

/** One IAM action a kind's driver calls. */
export interface IamAction {
  /** `service:Action`, as IAM policies spell it (`ec2:RunInstances`). */
  readonly action: string;
  /** The API operations that need it, as the SDK names them. @default the action's own name */
  readonly calls?: readonly string[];
  /** When the driver calls it, if not always: a short phrase for the IAM table. */
  readonly when?: string;
}

/**
 * IAM that a part of the operator other than a kind needs (change events, AwsAccounts), for the
 * same table and policies.
 */
export interface IamFeature {
  /** How the IAM table names it, in the Kind column. */
  readonly name: string;
  /** Its policy statement's Sid (letters and digits only). */
  readonly sid: string;
  readonly iam: readonly IamAction[];
}

/** The API operations that need `action`. */
export function callsOf(action: IamAction): readonly string[] {
  return action.calls ?? [action.action.slice(action.action.indexOf(":") + 1)];
}

/**
 * The IAM actions of `iam` that a call of `operation` to the service whose actions start with
 * `prefix` needs, as a phrase: `s3` and `HeadBucket` give `s3:ListBucket`; a call that needs more
 * than one action whatever the spec says (SQS CreateQueue with the operator's tags, EC2
 * RunInstances, which tags at launch) gives them all, `sqs:CreateQueue and sqs:TagQueue`. Actions
 * needed only for some specs (`when`) are named only when the call needs no other. When `iam`
 * names none: `prefix:operation`, for most services the action is the operation's name.
 */
export function actionOfCall(iam: readonly IamAction[], prefix: string, operation: string): string {
  const named = iam.filter((a) => a.action.startsWith(`${prefix}:`) && callsOf(a).includes(operation));
  const always = named.filter((a) => a.when === undefined).map((a) => a.action);
  const actions = always.length > 0 ? [...new Set(always)] : named.slice(0, 1).map((a) => a.action);
  if (actions.length === 0) return `${prefix}:${operation}`;
  return actions.length === 1
    ? (actions[0] ?? "")
    : `${actions.slice(0, -1).join(", ")} and ${actions.at(-1)}`;
}
