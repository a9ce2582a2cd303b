import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isOwnCall, MalformedEventError, parseChangeEvent, type OwnIdentities } from "./event.ts";
import { cloudTrailEvent, ec2StateChange } from "./testing/events.ts";

const ACCOUNT = "111122223333";

const own = (arns: string[] = []): OwnIdentities => ({
  userAgentToken: "kubeprovisioner",
  arns: () => arns,
  sessions: () => [
    { accountId: "444455556666", roleName: "kp-operator", sessionName: "kubeprovisioner-team-b" },
  ],
});

describe("parseChangeEvent", () => {
  it("reads a CloudTrail event's call, caller and user agent", () => {
    const body = cloudTrailEvent({
      eventSource: "s3.amazonaws.com",
      eventName: "PutBucketTagging",
      requestParameters: { bucketName: "b1", Host: "b1.s3.us-east-1.amazonaws.com", tagging: "" },
      account: ACCOUNT,
      region: "us-east-1",
      time: new Date("2026-01-02T03:04:05Z"),
    });
    const ev = parseChangeEvent(JSON.stringify(body));
    assert.equal(ev.detailType, "AWS API Call via CloudTrail");
    assert.equal(ev.account, ACCOUNT);
    assert.equal(ev.region, "us-east-1");
    assert.equal(ev.timeMs, Date.parse("2026-01-02T03:04:05Z"));
    assert.equal(ev.call?.eventSource, "s3.amazonaws.com");
    assert.equal(ev.call?.eventName, "PutBucketTagging");
    assert.equal(ev.call?.requestParameters.bucketName, "b1");
    assert.equal(ev.call?.caller.arn, `arn:aws:sts::${ACCOUNT}:assumed-role/Admin/someone@example.com`);
    assert.match(ev.call?.caller.userAgent ?? "", /^aws-cli\//);
  });

  it("reads EC2's state-change notification, which has no call", () => {
    const ev = parseChangeEvent(
      JSON.stringify(
        ec2StateChange({ instanceId: "i-0abc", state: "stopped", account: ACCOUNT, region: "eu-west-1" }),
      ),
    );
    assert.equal(ev.detailType, "EC2 Instance State-change Notification");
    assert.equal(ev.call, undefined);
    assert.equal(ev.detail["instance-id"], "i-0abc");
  });

  it("refuses bodies that are no EventBridge event", () => {
    for (const body of [
      "not json",
      "[]",
      "{}",
      JSON.stringify({ "detail-type": "x", account: ACCOUNT, region: "r" }),
    ])
      assert.throws(() => parseChangeEvent(body), MalformedEventError, body);
    const noSource = cloudTrailEvent({
      eventSource: "s3.amazonaws.com",
      eventName: "X",
      requestParameters: {},
      account: ACCOUNT,
      region: "us-east-1",
    });
    delete (noSource.detail as Record<string, unknown>).eventSource;
    assert.throws(() => parseChangeEvent(JSON.stringify(noSource)), /without eventSource/);
  });
});

describe("isOwnCall", () => {
  const call = (caller: Parameters<typeof cloudTrailEvent>[0]["caller"], account = ACCOUNT) =>
    parseChangeEvent(
      JSON.stringify(
        cloudTrailEvent({
          eventSource: "sqs.amazonaws.com",
          eventName: "TagQueue",
          requestParameters: {},
          account,
          region: "us-east-1",
          caller,
        }),
      ),
    ).call?.caller ?? assert.fail("a call");

  it("knows the operator's user agent, alone or versioned, bracketed as S3 records it", () => {
    assert.equal(
      isOwnCall(
        call({ userAgent: "aws-sdk-js/3.1 ua/2.1 os/linux lang/js kubeprovisioner" }),
        own(),
        ACCOUNT,
      ),
      true,
    );
    assert.equal(
      isOwnCall(call({ userAgent: "[aws-sdk-js/3.1 kubeprovisioner/0.1.0]" }), own(), ACCOUNT),
      true,
    );
    assert.equal(
      isOwnCall(call({ userAgent: "aws-sdk-js/3.1 kubeprovisioner-fork" }), own(), ACCOUNT),
      false,
    );
  });

  it("knows its own principal's ARN and its AwsAccounts' role sessions", () => {
    const arn = `arn:aws:sts::${ACCOUNT}:assumed-role/Admin/someone@example.com`;
    assert.equal(isOwnCall(call({}), own([arn]), ACCOUNT), true);
    assert.equal(isOwnCall(call({}), own(), ACCOUNT), false);
    const b = call(
      { accountId: "444455556666", roleName: "kp-operator", sessionName: "kubeprovisioner-team-b" },
      "444455556666",
    );
    assert.equal(isOwnCall(b, own(), "444455556666"), true);
    const otherRole = call(
      { accountId: "444455556666", roleName: "Admin", sessionName: "kubeprovisioner-team-b" },
      "444455556666",
    );
    assert.equal(isOwnCall(otherRole, own(), "444455556666"), false);
  });

  it("falls back to principalId's session name when the ARN is not an assumed role's", () => {
    assert.equal(
      isOwnCall(
        { arn: undefined, principalId: "AROAEXAMPLE:kubeprovisioner-team-b", userAgent: undefined },
        own(),
        "444455556666",
      ),
      true,
    );
    assert.equal(
      isOwnCall(
        { arn: undefined, principalId: "AROAEXAMPLE:kubeprovisioner-team-b", userAgent: undefined },
        own(),
        ACCOUNT,
      ),
      false,
    );
  });
});
