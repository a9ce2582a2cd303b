import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MANAGED_BY_VALUE, OWNERSHIP_TAGS } from "../api/v1/group.ts";
import { KINDS } from "../kinds.ts";
import type { KindModule } from "../reconcilers/common/kind.ts";
import { IAM_FEATURES } from "./iam.ts";
import {
  iamPolicy,
  renderIamPolicy,
  TAG_SCOPED_GRANTS,
  TENANT_ROLES,
  type PolicyDocument,
  type PolicyStatement,
} from "./iam-policy.ts";

const registryActions = new Set(KINDS.flatMap((k) => k.iam.map((a) => a.action)));
const everyAction = new Set([...registryActions, ...IAM_FEATURES.flatMap((f) => f.iam.map((a) => a.action))]);

/** Whether the statement's Resource covers `arn` (IAM's `*` wildcard). */
function covers(s: PolicyStatement, arn: string): boolean {
  const patterns = typeof s.Resource === "string" ? [s.Resource] : s.Resource;
  return patterns.some((p) =>
    new RegExp(
      `^${p
        .split("*")
        .map((part) => part.replace(/[.?+^$()[\]{}|\\]/g, "\\$&"))
        .join(".*")}$`,
    ).test(arn),
  );
}

function allowed(doc: PolicyDocument): Set<string> {
  return new Set(doc.Statement.flatMap((s) => s.Action));
}

function resources(doc: PolicyDocument): string[] {
  return doc.Statement.flatMap((s) => (typeof s.Resource === "string" ? [s.Resource] : s.Resource));
}

for (const tagScoped of [false, true]) {
  describe(tagScoped ? "the tag-scoped IAM policy" : "the IAM policy", () => {
    const doc = iamPolicy(KINDS, tagScoped, TAG_SCOPED_GRANTS, IAM_FEATURES);

    it("allows exactly the actions the kinds and the features declare", () => {
      assert.deepEqual([...allowed(doc)].sort(), [...everyAction].sort());
      assert.ok(doc.Statement.every((s) => s.Effect === "Allow"));
    });

    it("allows every action the operator calls, AwsAccounts' AssumeRole with the TagSession of EKS Pod Identity included", () => {
      for (const a of [
        "sts:AssumeRole",
        "sts:TagSession",
        "kms:Decrypt",
        "sqs:ReceiveMessage",
        "tag:GetResources",
      ])
        assert.ok(allowed(doc).has(a), a);
      const assume = doc.Statement.filter((s) => s.Action.includes("sts:AssumeRole"));
      assert.deepEqual(
        assume.map((s) => [s.Action, s.Resource, s.Condition]),
        [[["sts:AssumeRole", "sts:TagSession"], TENANT_ROLES, undefined]],
        "both, in one statement, on the tenant roles only",
      );
      assert.ok(
        covers(assume[0] as PolicyStatement, "arn:aws:iam::111122223333:role/kubeprovisioner-tenant"),
      );
      assert.ok(!covers(assume[0] as PolicyStatement, "arn:aws:iam::111122223333:role/admin"));
    });

    it("lets the change-event reader decrypt a queue's messages through SQS only", () => {
      const kms = doc.Statement.filter(
        (s) => s.Sid.startsWith("ChangeEvents") && s.Action.includes("kms:Decrypt"),
      );
      assert.deepEqual(
        kms.map((s) => [s.Sid, s.Action, s.Condition]),
        [["ChangeEventsKms", ["kms:Decrypt"], { StringLike: { "kms:ViaService": "sqs.*.amazonaws.com" } }]],
      );
    });

    it("is not locked to a region: no region in a resource, no region condition", () => {
      for (const arn of resources(doc)) {
        if (arn === "*") continue;
        // IAM is global: its ARNs have no region field at all.
        const region = arn.split(":")[3];
        assert.ok(
          region === "*" || (arn.startsWith("arn:aws:iam:") && region === ""),
          `${arn} names a region`,
        );
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
      const size = renderIamPolicy(KINDS, tagScoped, IAM_FEATURES).replace(/\s/g, "").length;
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
  const scoped = iamPolicy(KINDS, true, TAG_SCOPED_GRANTS, IAM_FEATURES);
  const resourceTag = `aws:ResourceTag/${OWNERSHIP_TAGS.managedBy}`;
  const requestTag = `aws:RequestTag/${OWNERSHIP_TAGS.managedBy}`;

  it("names only actions the kinds and features call, and only kinds and features that exist", () => {
    const parts = new Set([...KINDS.map((k) => k.resource.kind), ...IAM_FEATURES.map((f) => f.sid)]);
    for (const grant of TAG_SCOPED_GRANTS) {
      for (const a of grant.actions) assert.ok(everyAction.has(a), `${grant.sid}: ${a} is not called`);
      if (grant.kind !== undefined) assert.ok(parts.has(grant.kind), `${grant.sid}: no ${grant.kind}`);
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

  it("lets RunInstances use every resource a spec setting makes it name or create", () => {
    const launch = scoped.Statement.filter((s) => s.Action.includes("ec2:RunInstances"));
    // Per the Service Authorization Reference (RunInstances' resource types), for the settings
    // of an Ec2Instance spec: each must be covered by a statement that allows RunInstances.
    const named: Record<string, string> = {
      instance: "arn:aws:ec2:us-east-1:111122223333:instance/*",
      "storage volumes": "arn:aws:ec2:us-east-1:111122223333:volume/*",
      amiId: "arn:aws:ec2:us-east-1::image/ami-0abcdef1234567890",
      "a volume's snapshotId": "arn:aws:ec2:us-east-1::snapshot/snap-0123",
      subnet: "arn:aws:ec2:us-east-1:111122223333:subnet/subnet-0123",
      "associatePublicIP (a network interface)": "arn:aws:ec2:us-east-1:111122223333:network-interface/*",
      securityGroups: "arn:aws:ec2:us-east-1:111122223333:security-group/sg-0123",
      keyPair: "arn:aws:ec2:us-east-1:111122223333:key-pair/my-key",
      "placement.groupName": "arn:aws:ec2:us-east-1:111122223333:placement-group/web",
      "placement.tenancy host": "arn:aws:ec2:us-east-1:111122223333:dedicated-host/h-0123",
      "marketOptions (a Spot Instance request)":
        "arn:aws:ec2:us-east-1:111122223333:spot-instances-request/*",
    };
    for (const [setting, arn] of Object.entries(named))
      assert.ok(
        launch.some((s) => covers(s, arn)),
        `${setting}: RunInstances is denied on ${arn}`,
      );
    // Only the instance and its volumes, which the launch tags, are held to the tag.
    for (const s of launch.filter((st) => st.Condition !== undefined))
      assert.deepEqual(s.Resource, ["arn:aws:ec2:*:*:instance/*", "arn:aws:ec2:*:*:volume/*"]);
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
