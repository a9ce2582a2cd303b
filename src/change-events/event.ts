/**
 * AWS change events as EventBridge delivers them to an SQS queue: the message body is the event
 * itself, an envelope (`version`, `id`, `detail-type`, `source`, `account`, `time`, `region`,
 * `resources`, `detail`). Two kinds matter here:
 *
 * - "AWS API Call via CloudTrail": `detail` is the CloudTrail record (`eventSource`,
 *   `eventName`, `requestParameters`, `userIdentity`, `userAgent`, …), sent for write
 *   management events when a trail logs them.
 * - A service's own events, such as EC2's "EC2 Instance State-change Notification"
 *   (`detail["instance-id"]`, `detail.state`).
 *
 * An event is only ever a hint that something changed: nothing in it is taken as the resource's
 * state. {@link parseChangeEvent} only finds who is concerned and who made the call.
 */
import { record, type EventDetail } from "./naming.ts";

/** The detail-type of CloudTrail's API call events. */
export const CLOUDTRAIL_DETAIL_TYPE = "AWS API Call via CloudTrail";

/** A change event, reduced to what routing needs. */
export interface ChangeEvent {
  readonly id: string;
  readonly detailType: string;
  /** The account of the change; AWS always sends it, some emulators leave it out. */
  readonly account: string | undefined;
  readonly region: string;
  /** When the change happened (the envelope's `time`), in ms since the epoch. */
  readonly timeMs: number | undefined;
  readonly detail: EventDetail;
  /** For CloudTrail events: the service called and the call. */
  readonly call?: {
    readonly eventSource: string;
    readonly eventName: string;
    readonly requestParameters: EventDetail;
    readonly caller: Caller;
  };
}

/** Who made an API call, as CloudTrail records it. */
export interface Caller {
  readonly arn: string | undefined;
  readonly principalId: string | undefined;
  readonly userAgent: string | undefined;
}

/** Why a message was not an event the operator can use. */
export class MalformedEventError extends Error {
  override readonly name = "MalformedEventError";
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** Parses a message body. @throws MalformedEventError when it is no EventBridge event */
export function parseChangeEvent(body: string): ChangeEvent {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new MalformedEventError("the message body is not JSON");
  }
  const env = record(json);
  if (env === undefined) throw new MalformedEventError("the message body is not a JSON object");
  const detailType = str(env["detail-type"]);
  const account = str(env.account);
  const region = str(env.region);
  const detail = record(env.detail);
  if (detailType === undefined || region === undefined || detail === undefined)
    throw new MalformedEventError("the message is no EventBridge event (detail-type, region and detail)");
  const time = str(env.time);
  const timeMs = time !== undefined ? Date.parse(time) : NaN;
  const base = {
    id: str(env.id) ?? "",
    detailType,
    account,
    region,
    timeMs: Number.isFinite(timeMs) ? timeMs : undefined,
    detail,
  };
  if (detailType !== CLOUDTRAIL_DETAIL_TYPE) return base;
  const eventSource = str(detail.eventSource);
  const eventName = str(detail.eventName);
  if (eventSource === undefined || eventName === undefined)
    throw new MalformedEventError("a CloudTrail event without eventSource or eventName");
  const identity = record(detail.userIdentity);
  return {
    ...base,
    call: {
      eventSource,
      eventName,
      requestParameters: record(detail.requestParameters) ?? {},
      caller: {
        arn: str(identity?.arn),
        principalId: str(identity?.principalId),
        userAgent: str(detail.userAgent),
      },
    },
  };
}

/** The identities the operator's own calls carry, in every account it works in. */
export interface OwnIdentities {
  /** The token the operator's SDK clients add to their User-Agent (src/aws/clients.ts). */
  readonly userAgentToken: string;
  /** Full ARNs of the operator's own principals (its default credentials, per GetCallerIdentity). */
  arns(): Iterable<string>;
  /** Assumed-role sessions it acts in: role name and session name (the AwsAccounts' sessions). */
  sessions(): Iterable<{
    readonly accountId: string;
    readonly roleName: string;
    readonly sessionName: string;
  }>;
}

/**
 * Whether the operator itself made the call: its User-Agent token is in CloudTrail's
 * `userAgent`, or the caller is one of its principals (the ARN, or an assumed-role session of
 * one of its roles, by ARN or by `principalId`'s `<role ID>:<session name>`).
 */
export function isOwnCall(caller: Caller, own: OwnIdentities, eventAccount: string | undefined): boolean {
  if (caller.userAgent !== undefined && hasToken(caller.userAgent, own.userAgentToken)) return true;
  if (caller.arn !== undefined) for (const arn of own.arns()) if (arn === caller.arn) return true;
  const assumed =
    caller.arn !== undefined
      ? /^arn:[a-z-]+:sts::([0-9]{12}):assumed-role\/([^/]+)\/(.+)$/.exec(caller.arn)
      : null;
  const principalSession =
    caller.principalId?.includes(":") === true
      ? caller.principalId.slice(caller.principalId.indexOf(":") + 1)
      : undefined;
  for (const s of own.sessions()) {
    if (
      assumed !== null &&
      assumed[1] === s.accountId &&
      assumed[2] === s.roleName &&
      assumed[3] === s.sessionName
    )
      return true;
    if (assumed === null && principalSession === s.sessionName && eventAccount === s.accountId) return true;
  }
  return false;
}

/** Whether `userAgent` carries `token` as one of its products (`token` or `token/<version>`). */
function hasToken(userAgent: string, token: string): boolean {
  return userAgent
    .replace(/[[\]]/g, " ")
    .split(/\s+/)
    .some((p) => p === token || p.startsWith(`${token}/`));
}
