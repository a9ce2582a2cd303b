import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bucketArn, notEmptyMessage, targetVersioning, versioningChange } from "./model.ts";
import { DEFAULT_TAG_POLICY, describeTagPlan, planTags } from "../common/tags.ts";
import type { TagMap } from "../../aws/ownership.ts";

/** The bucket's tag plan: tags are authoritative. */
const bucketTagDiff = (desired: TagMap, actual: TagMap) => planTags(desired, actual, DEFAULT_TAG_POLICY);

describe("bucketArn", () => {
  it("names the bucket in the partition of its region, without region or account", () => {
    assert.equal(bucketArn("b", "eu-west-1"), "arn:aws:s3:::b");
    assert.equal(bucketArn("b", "cn-north-1"), "arn:aws-cn:s3:::b");
    assert.equal(bucketArn("b", "us-gov-west-1"), "arn:aws-us-gov:s3:::b");
  });
});

describe("bucketTagDiff", () => {
  const desired = { a: "1", b: "2" };

  it("is empty when the bucket carries exactly the desired tags", () => {
    assert.deepEqual(bucketTagDiff(desired, { b: "2", a: "1" }), { set: {}, remove: [] });
  });

  it("sets changed and missing tags and removes tags nobody asked for", () => {
    const diff = bucketTagDiff(desired, { a: "0", other: "x" });
    assert.deepEqual(diff, { set: { a: "1", b: "2" }, remove: ["other"] });
    assert.equal(describeTagPlan(diff), "tags: set a, b; removed other");
  });

  it("ignores aws: tags, which no caller can write or remove", () => {
    assert.deepEqual(bucketTagDiff(desired, { ...desired, "aws:cloudformation:stack-name": "s" }), {
      set: {},
      remove: [],
    });
  });
});

describe("targetVersioning", () => {
  it("enables versioning when asked, whatever the bucket had", () => {
    assert.equal(targetVersioning(true, undefined), "Enabled");
    assert.equal(targetVersioning(true, "Suspended"), "Enabled");
    assert.equal(targetVersioning(true, "Enabled"), undefined);
  });

  it("suspends enabled versioning on false, and leaves a never-versioned or suspended bucket alone", () => {
    assert.equal(targetVersioning(false, "Enabled"), "Suspended");
    assert.equal(targetVersioning(false, "Suspended"), undefined);
    assert.equal(targetVersioning(false, undefined), undefined);
  });
});

describe("versioningChange", () => {
  it("is none when the bucket is as the spec asks, even a never-versioned bucket for false", () => {
    assert.equal(versioningChange(true, "Enabled"), undefined);
    assert.equal(versioningChange(false, "Suspended"), undefined);
    assert.equal(versioningChange(false, undefined), undefined);
  });

  it("names spec.versioning with the spec's values, PutBucketVersioning and no disruption", () => {
    assert.deepEqual(versioningChange(true, undefined), {
      path: "spec.versioning",
      setting: "versioning",
      observed: false,
      desired: true,
      actions: ["s3:PutBucketVersioning"],
      disruption: "none",
      description: "versioning: never enabled -> Enabled",
      group: "versioning",
    });
    const suspend = versioningChange(false, "Enabled");
    assert.deepEqual(
      [suspend?.observed, suspend?.desired, suspend?.description],
      [true, false, "versioning: Enabled -> Suspended"],
    );
  });
});

describe("notEmptyMessage", () => {
  it("states the count, says whether there are more, and offers the ways out", () => {
    assert.match(notEmptyMessage("b", 1, false), /still holds 1 object or object version;/);
    assert.match(notEmptyMessage("b", 1000, true), /still holds at least 1000 objects or object versions;/);
    assert.match(notEmptyMessage("b", 3, false), /spec\.forceDelete/);
    assert.equal(notEmptyMessage("b", 3, false), notEmptyMessage("b", 3, false));
  });
});
