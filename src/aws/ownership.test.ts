import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  MANAGED_BY_TAG,
  MAX_TAG_VALUE_LENGTH,
  KIND_TAG,
  NAMESPACE_TAG,
  NAME_TAG,
  UID_TAG,
  desiredTags,
  ec2OwnershipFilters,
  fromEc2Tags,
  fromS3TagSet,
  fromSqsTags,
  ownershipTags,
  toEc2Tags,
  toS3TagSet,
  toSqsTags,
} from "./ownership.ts";

const owner = {
  uid: "0b6c9a52-2f4e-4b8e-9d61-3f1f0e7c2a11",
  namespace: "team-a",
  name: "web",
  kind: "S3Bucket",
};

describe("ownership tags", () => {
  it("names the manager, the owning object's UID, namespace, name and kind", () => {
    assert.deepEqual(ownershipTags(owner), {
      [MANAGED_BY_TAG]: "kubeprovisioner",
      [UID_TAG]: owner.uid,
      [NAMESPACE_TAG]: "team-a",
      [NAME_TAG]: "web",
      [KIND_TAG]: "S3Bucket",
    });
    assert.equal(UID_TAG, "compute.cloud.com/uid");
  });

  it("merges user tags under ours; a user cannot override or forge ownership", () => {
    const tags = desiredTags(
      {
        env: "prod",
        [UID_TAG]: "someone-else",
        [MANAGED_BY_TAG]: "terraform",
        "compute.cloud.com/extra": "x",
        Name: "web-1",
      },
      owner,
    );
    assert.deepEqual(tags, {
      Name: "web-1",
      env: "prod",
      [KIND_TAG]: "S3Bucket",
      [MANAGED_BY_TAG]: "kubeprovisioner",
      [NAME_TAG]: "web",
      [NAMESPACE_TAG]: "team-a",
      [UID_TAG]: owner.uid,
    });
    assert.deepEqual(Object.keys(tags), [...Object.keys(tags)].sort(), "keys come out sorted");
  });

  it("gives the ownership tags alone when the user has none", () => {
    assert.deepEqual(desiredTags(undefined, owner), ownershipTags(owner));
  });

  it("keeps every value within AWS's tag value limit for the longest legal names", () => {
    const longest = { uid: owner.uid, namespace: "n".repeat(63), name: "x".repeat(253), kind: "Ec2Instance" };
    for (const v of Object.values(ownershipTags(longest))) assert.ok(v.length <= MAX_TAG_VALUE_LENGTH);
  });

  it("filters EC2 resources by the UID and managed-by tags", () => {
    assert.deepEqual(ec2OwnershipFilters(owner.uid), [
      { Name: `tag:${UID_TAG}`, Values: [owner.uid] },
      { Name: `tag:${MANAGED_BY_TAG}`, Values: ["kubeprovisioner"] },
    ]);
  });
});

describe("tag conversions", () => {
  const tags = { b: "2", a: "1", empty: "" };

  it("round-trips through the EC2 list shape, sorted by key", () => {
    const list = toEc2Tags(tags);
    assert.deepEqual(list, [
      { Key: "a", Value: "1" },
      { Key: "b", Value: "2" },
      { Key: "empty", Value: "" },
    ]);
    assert.deepEqual(fromEc2Tags(list), { a: "1", b: "2", empty: "" });
  });

  it("reads EC2 responses with missing fields", () => {
    assert.deepEqual(fromEc2Tags([{ Key: "k" }, { Value: "orphan" }, { Key: "x", Value: "y" }]), {
      k: "",
      x: "y",
    });
    assert.deepEqual(fromEc2Tags(undefined), {});
  });

  it("round-trips through the S3 TagSet shape", () => {
    assert.deepEqual(fromS3TagSet(toS3TagSet(tags)), { a: "1", b: "2", empty: "" });
  });

  it("round-trips through the SQS record shape", () => {
    assert.deepEqual(toSqsTags(tags), { a: "1", b: "2", empty: "" });
    assert.deepEqual(fromSqsTags({ z: "1", y: undefined }), { y: "", z: "1" });
    assert.deepEqual(fromSqsTags(undefined), {});
  });
});
