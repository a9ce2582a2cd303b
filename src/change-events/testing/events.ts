/**
 * Change events shaped as AWS documents them, for tests: the EventBridge envelope around a
 * CloudTrail record ("AWS API Call via CloudTrail") and EC2's "EC2 Instance State-change
 * Notification". The CloudTrail record carries the fields of a management write event; the
 * caller is an assumed-role session unless the test says otherwise.
 */
import { randomUUID } from "node:crypto";

/** Who made a call, as CloudTrail's userIdentity and userAgent record it. */
export interface TestCaller {
  readonly accountId?: string;
  readonly roleName?: string;
  readonly sessionName?: string;
  readonly userAgent?: string;
}

const SOURCES: Readonly<Record<string, string>> = {
  "s3.amazonaws.com": "aws.s3",
  "sqs.amazonaws.com": "aws.sqs",
  "ec2.amazonaws.com": "aws.ec2",
};

/** An "AWS API Call via CloudTrail" event, as EventBridge delivers it. */
export function cloudTrailEvent(opts: {
  eventSource: "s3.amazonaws.com" | "sqs.amazonaws.com" | "ec2.amazonaws.com";
  eventName: string;
  requestParameters: Record<string, unknown>;
  account: string;
  region: string;
  caller?: TestCaller;
  time?: Date;
}): Record<string, unknown> {
  const time = (opts.time ?? new Date()).toISOString().replace(/\.\d{3}Z$/, "Z");
  const caller = opts.caller ?? {};
  const accountId = caller.accountId ?? opts.account;
  const roleName = caller.roleName ?? "Admin";
  const session = caller.sessionName ?? "someone@example.com";
  return {
    version: "0",
    id: randomUUID(),
    "detail-type": "AWS API Call via CloudTrail",
    source: SOURCES[opts.eventSource],
    account: opts.account,
    time,
    region: opts.region,
    resources: [],
    detail: {
      eventVersion: "1.09",
      userIdentity: {
        type: "AssumedRole",
        principalId: `AROAEXAMPLEROLEID1234:${session}`,
        arn: `arn:aws:sts::${accountId}:assumed-role/${roleName}/${session}`,
        accountId,
        accessKeyId: "ASIAEXAMPLEKEYID1234",
        sessionContext: {
          sessionIssuer: {
            type: "Role",
            principalId: "AROAEXAMPLEROLEID1234",
            arn: `arn:aws:iam::${accountId}:role/${roleName}`,
            accountId,
            userName: roleName,
          },
          attributes: { creationDate: time, mfaAuthenticated: "false" },
        },
      },
      eventTime: time,
      eventSource: opts.eventSource,
      eventName: opts.eventName,
      awsRegion: opts.region,
      sourceIPAddress: "192.0.2.10",
      userAgent:
        caller.userAgent ??
        "aws-cli/2.15.0 Python/3.11.6 Linux/6.1 exe/x86_64.amzn.2 command/s3api.put-bucket-tagging",
      requestParameters: opts.requestParameters,
      responseElements: null,
      requestID: "EXAMPLE123REQUEST",
      eventID: randomUUID(),
      readOnly: false,
      eventType: "AwsApiCall",
      managementEvent: true,
      recipientAccountId: opts.account,
      eventCategory: "Management",
    },
  };
}

/** An "EC2 Instance State-change Notification" event. */
export function ec2StateChange(opts: {
  instanceId: string;
  state: "pending" | "running" | "stopping" | "stopped" | "shutting-down" | "terminated";
  account: string;
  region: string;
  time?: Date;
}): Record<string, unknown> {
  return {
    version: "0",
    id: randomUUID(),
    "detail-type": "EC2 Instance State-change Notification",
    source: "aws.ec2",
    account: opts.account,
    time: (opts.time ?? new Date()).toISOString().replace(/\.\d{3}Z$/, "Z"),
    region: opts.region,
    resources: [`arn:aws:ec2:${opts.region}:${opts.account}:instance/${opts.instanceId}`],
    detail: { "instance-id": opts.instanceId, state: opts.state },
  };
}

/** CreateTags's requestParameters for `resourceIds`. */
export function createTagsParameters(
  resourceIds: readonly string[],
  tags: Record<string, string>,
): Record<string, unknown> {
  return {
    resourcesSet: { items: resourceIds.map((resourceId) => ({ resourceId })) },
    tagSet: { items: Object.entries(tags).map(([key, value]) => ({ key, value })) },
  };
}
