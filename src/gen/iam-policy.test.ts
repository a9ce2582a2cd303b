import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MANAGED_BY_VALUE, OWNERSHIP_TAGS } from "../api/v1/group.ts";
import { KINDS } from "../kinds.ts";
import type { KindModule } from "../reconcilers/common/kind.ts";
import { iamPolicy, renderIamPolicy, TAG_SCOPED_GRANTS, type PolicyDocument } from "./iam-policy.ts";

const registryActions = new Set(KINDS.flatMap((k) => k.iam.map((a) => a.action)));

function allowed(doc: PolicyDocument): Set<string> {
  return new Set(doc.Statement.flatMap((s) => s.Action));
}

function resources(doc: PolicyDocument): string[] {
  return doc.Statement.flatMap((s) => (typeof s.Resource === "string" ? [s.Resource] : s.Resource));
}

for (const tagScoped of [false, true]) {
  describe(tagScoped ? "the tag-scoped IAM policy" : "the IAM policy", () => {
    const doc = iamPolicy(KINDS, tagScoped);

    it("allows exactly the actions the kinds declare", () => {
      assert.deepEqual([...allowed(doc)].sort(), [...registryActions].sort());
      assert.ok(doc.Statement.every((s) => s.Effect === "Allow"));
    });

    it("is not locked to a region: no region in a resource, no region condition", () => {
      for (const arn of resources(doc)) {
        if (arn === "*") continue;
        assert.equal(arn.split(":")[3], "*", `${arn} names a region`);
      }
      const keys = doc.Statement.flatMap((s) => Object.values(s.Condition ?? {}).flatMap(Object.keys));
      assert.deepEqual(
        keys.filter((k) => /region/i.test(k)),
        [],
      );
    });

    it("has unique statement IDs of letters and digits, within IAM's size limit of a managed policy", () => {
      const sids = doc.Statement.map((s) => s.Sid);
      assert.equal(new Set(sids).size, sids.length);
      for (const sid of sids) assert.match(sid, /^[A-Za-z0-9]+$/);
      // A customer managed policy holds at most 6,144 characters, whitespace not counted.
      const size = renderIamPolicy(KINDS, tagScoped).replace(/\s/g, "").length;
      assert.ok(size <= 6144, `${size} characters`);
    });

    it("passes roles only to EC2 (instance profiles) and S3 (the replication role)", () => {
      const passRole = doc.Statement.filter((s) => s.Action.includes("iam:PassRole"));
      assert.deepEqual(
        passRole.map((s) => [s.Sid, s.Action, s.Condition]),
        [
          [
            "Ec2InstancePassRole",
            ["iam:PassRole"],
            { StringEquals: { "iam:PassedToService": "ec2.amazonaws.com" } },
          ],
          [
            "S3BucketPassRole",
            ["iam:PassRole"],
            { StringEquals: { "iam:PassedToService": "s3.amazonaws.com" } },
          ],
        ],
      );
    });
  });
}

describe("the tag scoping", () => {
  const scoped = iamPolicy(KINDS, true);
  const resourceTag = `aws:ResourceTag/${OWNERSHIP_TAGS.managedBy}`;
  const requestTag = `aws:RequestTag/${OWNERSHIP_TAGS.managedBy}`;

  it("names only actions the kinds call", () => {
    for (const grant of TAG_SCOPED_GRANTS) {
      for (const a of grant.actions) assert.ok(registryActions.has(a), `${grant.sid}: ${a} is not called`);
    }
  });

  it("confines the deletes and changes of instances and queues to those carrying the managed-by tag", () => {
    const byTag = (key: string) =>
      new Set(
        scoped.Statement.filter((s) => s.Condition?.["StringEquals"]?.[key] === MANAGED_BY_VALUE).flatMap(
          (s) => s.Action,
        ),
      );
    const owned = byTag(resourceTag);
    for (const a of ["ec2:TerminateInstances", "ec2:StopInstances", "ec2:DeleteTags", "sqs:DeleteQueue"])
      assert.ok(owned.has(a), a);
    const created = byTag(requestTag);
    for (const a of ["ec2:RunInstances", "sqs:CreateQueue"]) assert.ok(created.has(a), a);
    // Nothing that deletes is also allowed unconditionally.
    const unconditioned = new Set(
      scoped.Statement.filter((s) => s.Condition === undefined && s.Resource === "*").flatMap(
        (s) => s.Action,
      ),
    );
    for (const a of ["ec2:TerminateInstances", "ec2:DeleteTags", "sqs:DeleteQueue", "sqs:UntagQueue"])
      assert.ok(!unconditioned.has(a), `${a} is allowed on any resource`);
  });

  it("leaves the lookups of resources that are not the operator's yet unscoped", () => {
    const anywhere = new Set(
      scoped.Statement.filter((s) => s.Condition === undefined && s.Resource === "*").flatMap(
        (s) => s.Action,
      ),
    );
    for (const a of ["ec2:DescribeInstances", "sqs:GetQueueUrl", "sqs:ListQueueTags", "s3:ListBucket"])
      assert.ok(anywhere.has(a), a);
  });

  it("allows an action a kind adds on any resource until a grant names it", () => {
    const [first] = KINDS;
    assert.ok(first !== undefined);
    const grown: KindModule = { ...first, iam: [...first.iam, { action: "ec2:DescribeVolumes" }] };
    for (const tagScoped of [false, true]) {
      const doc = iamPolicy([grown], tagScoped);
      const statement = doc.Statement.find((s) => s.Action.includes("ec2:DescribeVolumes"));
      assert.equal(statement?.Resource, "*");
      assert.equal(statement?.Condition, undefined);
    }
  });
});
