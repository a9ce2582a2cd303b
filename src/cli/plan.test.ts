import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError } from "../config/config-error.ts";
import { parsePlanArgs } from "./plan.ts";
import { renderPlan, summarize, type PlannedObject } from "./plan-output.ts";

describe("parsePlanArgs", () => {
  it("takes -f repeatedly, or --live with a namespace or all of them and a selector", () => {
    const f = parsePlanArgs(["-f", "a.yaml", "--filename=b/", "-R", "-o", "json"]);
    assert.deepEqual([f.files, f.recursive, f.live, f.output], [["a.yaml", "b/"], true, false, "json"]);
    const live = parsePlanArgs([
      "--live",
      "-A",
      "-l",
      "team=a",
      "--adoption",
      "enabled",
      "--default-tags",
      "cost=c1",
    ]);
    assert.deepEqual(
      [live.live, live.allNamespaces, live.selector, live.adoption, live.defaultTags],
      [true, true, "team=a", "enabled", { cost: "c1" }],
    );
    assert.equal(parsePlanArgs(["--live"]).output, "text");
  });

  it("refuses what does not go together, and unknown values", () => {
    assert.throws(() => parsePlanArgs([]), ConfigError);
    assert.throws(() => parsePlanArgs(["--live", "-f", "x"]), /either -f/);
    assert.throws(() => parsePlanArgs(["-f", "x", "-A"]), /-A and -l go with --live/);
    assert.throws(() => parsePlanArgs(["--live", "-A", "-n", "x"]), /exclude each other/);
    assert.throws(() => parsePlanArgs(["--live", "-o", "yaml"]), ConfigError);
    assert.throws(() => parsePlanArgs(["--live", "--adoption", "maybe"]), ConfigError);
    assert.throws(() => parsePlanArgs(["--live", "--bogus"]), /Unknown option/);
    assert.equal(parsePlanArgs(["--help"]).help, true);
  });
});

describe("the plan's summary and text", () => {
  const objects: PlannedObject[] = [
    {
      kind: "Ec2Instance",
      namespace: "ns",
      name: "web",
      action: "update",
      changes: [
        {
          path: "spec.instanceType",
          observed: "t3.micro",
          desired: "t3.small",
          actions: ["ec2:StopInstances"],
          disruption: "restart",
        },
        { path: "spec.tags.team", desired: "a", actions: ["ec2:CreateTags"], disruption: "none" },
        {
          path: "spec.storage",
          actions: [],
          disruption: "refused",
          reason: "DriftNotRepaired",
          message: "size differs",
        },
      ],
      approval: { hash: "0123456789abcdef", approved: false },
    },
    {
      kind: "S3Bucket",
      namespace: "ns",
      name: "b",
      action: "create",
      changes: [
        {
          path: "spec",
          desired: {},
          actions: ["s3:CreateBucket", "s3:PutBucketTagging"],
          disruption: "none",
        },
      ],
    },
    { kind: "SqsQueue", namespace: "ns", name: "q", action: "in-sync", changes: [] },
    {
      kind: "SqsQueue",
      namespace: "ns",
      name: "r",
      action: "refused",
      changes: [],
      reason: "NotOwned",
      message: "not ours",
    },
  ];

  it("counts objects per action and the changes to apply, restarts and refusals", () => {
    const s = summarize(objects);
    assert.deepEqual(
      [
        s.objects,
        s.create,
        s.update,
        s.inSync,
        s.refused,
        s.changes,
        s.restarts,
        s.refusedChanges,
        s.awaitingApproval,
      ],
      [4, 1, 1, 1, 1, 3, 1, 1, 1],
    );
  });

  it("prints each object, its changes, the approval command and the summary", () => {
    const text = renderPlan({ schemaVersion: 1, objects, summary: summarize(objects) });
    assert.equal(
      text,
      [
        "Ec2Instance ns/web: update",
        '  ~ spec.instanceType: "t3.micro" -> "t3.small"  RESTART  [ec2:StopInstances]',
        '  + spec.tags.team: "a"  [ec2:CreateTags]',
        "  x spec.storage  refused (DriftNotRepaired): size differs",
        "  waits for approval: kubectl annotate ec2instance -n ns web compute.cloud.com/approved-changes=0123456789abcdef --overwrite",
        "S3Bucket ns/b: create",
        "  + create  [s3:CreateBucket, s3:PutBucketTagging]",
        "SqsQueue ns/q: in-sync",
        "SqsQueue ns/r: refused: NotOwned: not ours",
        "",
        "Plan: 1 to create, 1 to update, 0 to adopt, 1 in sync; 3 change(s), 1 restart(s), 0 replacement(s), 1 refused; 1 awaiting approval.",
        "",
      ].join("\n"),
    );
  });
});
