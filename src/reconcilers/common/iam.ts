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
 * The IAM action of `iam` that a call of `operation` to the service whose actions start with
 * `prefix` needs (`s3` and `HeadBucket`: `s3:ListBucket`), or `prefix:operation` when `iam`
 * names none: for most services the action is the operation's name.
 */
export function actionOfCall(iam: readonly IamAction[], prefix: string, operation: string): string {
  const named = iam.find((a) => a.action.startsWith(`${prefix}:`) && callsOf(a).includes(operation));
  return named?.action ?? `${prefix}:${operation}`;
}
