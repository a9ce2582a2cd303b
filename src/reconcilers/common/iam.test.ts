import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KINDS } from "../../kinds.ts";
import { actionOfCall, type IamAction } from "./iam.ts";

const iamOf = (kind: string): readonly IamAction[] => {
  const found = KINDS.find((k) => k.resource.kind === kind);
  assert.ok(found !== undefined, kind);
  return found.iam;
};

describe("actionOfCall", () => {
  it("names the action IAM authorizes a call by, which may not be the operation's name", () => {
    assert.equal(actionOfCall(iamOf("S3Bucket"), "s3", "HeadBucket"), "s3:ListBucket");
    assert.equal(
      actionOfCall(iamOf("S3Bucket"), "s3", "PutBucketEncryption"),
      "s3:PutEncryptionConfiguration",
    );
    assert.equal(actionOfCall(iamOf("S3Bucket"), "s3", "DeleteBucketCors"), "s3:PutBucketCORS");
  });

  it("names every action a call always needs: CreateQueue tags the queue, RunInstances the instance", () => {
    assert.equal(actionOfCall(iamOf("SqsQueue"), "sqs", "CreateQueue"), "sqs:CreateQueue and sqs:TagQueue");
    assert.equal(
      actionOfCall(iamOf("Ec2Instance"), "ec2", "RunInstances"),
      "ec2:RunInstances and ec2:CreateTags",
    );
    assert.equal(actionOfCall(iamOf("SqsQueue"), "sqs", "TagQueue"), "sqs:TagQueue");
  });

  it("leaves out the actions only some specs need, unless the call needs no other", () => {
    // CreateBucket with objectOwnership or objectLock needs more; every CreateBucket needs this.
    assert.equal(actionOfCall(iamOf("S3Bucket"), "s3", "CreateBucket"), "s3:CreateBucket");
    assert.equal(
      actionOfCall(iamOf("Ec2Instance"), "ec2", "AssociateIamInstanceProfile"),
      "ec2:AssociateIamInstanceProfile",
    );
  });

  it("falls back to the operation's name when no action names the call", () => {
    assert.equal(actionOfCall([], "sqs", "ListQueues"), "sqs:ListQueues");
    assert.equal(actionOfCall(iamOf("S3Bucket"), "s3", "GetBucketAcl"), "s3:GetBucketAcl");
  });

  it("joins three or more actions with commas", () => {
    const iam: IamAction[] = [
      { action: "x:A", calls: ["Op"] },
      { action: "x:B", calls: ["Op"] },
      { action: "x:C", calls: ["Op"] },
    ];
    assert.equal(actionOfCall(iam, "x", "Op"), "x:A, x:B and x:C");
  });
});
