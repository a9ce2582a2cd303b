import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Instance } from "@aws-sdk/client-ec2";
import { ec2InstanceStatusSchema } from "../../api/v1/index.ts";
import { commonStatusFields } from "../../api/v1/common.ts";
import { DEFAULT_TAG_POLICY, describeTagPlan, planTags } from "../common/tags.ts";
import {
  formatLaunchTime,
  instanceStatus,
  isGone,
  LIVE_STATES,
  namedFilters,
  ownedFilters,
  pickInstance,
} from "./model.ts";

const inst = (over: Partial<Instance> = {}): Instance => ({
  InstanceId: "i-0123456789abcdef0",
  State: { Name: "running" },
  ...over,
});

describe("instanceStatus", () => {
  it("fills every status column from the instance", () => {
    const status = instanceStatus(
      inst({
        PublicIpAddress: "54.1.2.3",
        PrivateIpAddress: "10.0.0.5",
        PublicDnsName: "ec2-54-1-2-3.compute.amazonaws.com",
        PrivateDnsName: "ip-10-0-0-5.ec2.internal",
        LaunchTime: new Date("2024-05-01T12:00:00.789Z"),
      }),
    );
    assert.deepEqual(status, {
      instanceId: "i-0123456789abcdef0",
      state: "running",
      publicIP: "54.1.2.3",
      privateIP: "10.0.0.5",
      publicDNS: "ec2-54-1-2-3.compute.amazonaws.com",
      privateDNS: "ip-10-0-0-5.ec2.internal",
      launchTime: "2024-05-01T12:00:00Z",
    });
  });

  it("sets absent and empty values to undefined so stale ones are cleared", () => {
    const status = instanceStatus(
      inst({ State: { Name: "stopped" }, PublicDnsName: "", PublicIpAddress: undefined }),
    );
    assert.ok("publicIP" in status && status.publicIP === undefined);
    assert.ok("publicDNS" in status && status.publicDNS === undefined);
    assert.equal(status.state, "stopped");
  });

  it("describes exactly the instance fields of the status, which the flow clears once it is gone", () => {
    const flowOwned = new Set(Object.keys(commonStatusFields()));
    const instanceFields = Object.keys(ec2InstanceStatusSchema.node.properties ?? {}).filter(
      (k) => !flowOwned.has(k),
    );
    assert.deepEqual(Object.keys(instanceStatus(inst())).sort(), instanceFields.sort());
  });
});

describe("formatLaunchTime", () => {
  it("gives RFC 3339 in whole seconds, equal for the same second whatever the milliseconds", () => {
    assert.equal(formatLaunchTime(new Date("2024-05-01T12:00:00.001Z")), "2024-05-01T12:00:00Z");
    assert.equal(formatLaunchTime("2024-05-01T12:00:00.999Z"), "2024-05-01T12:00:00Z");
    assert.equal(formatLaunchTime(undefined), undefined);
    assert.equal(formatLaunchTime("not a date"), undefined);
  });
});

describe("isGone", () => {
  it("counts only terminated instances as gone", () => {
    assert.equal(isGone(inst({ State: { Name: "terminated" } })), true);
    for (const s of ["pending", "running", "stopping", "stopped", "shutting-down"] as const) {
      assert.equal(isGone(inst({ State: { Name: s } })), false, s);
    }
  });
});

describe("pickInstance", () => {
  const a = inst({
    InstanceId: "i-a",
    State: { Name: "stopped" },
    LaunchTime: new Date(1000),
    ClientToken: "tok-1",
  });
  const b = inst({ InstanceId: "i-b", State: { Name: "running" }, LaunchTime: new Date(2000) });
  const c = inst({ InstanceId: "i-c", State: { Name: "running" }, LaunchTime: new Date(1500) });

  it("prefers the instance launched with the recorded token", () => {
    assert.equal(pickInstance([b, c, a], "tok-1")?.InstanceId, "i-a");
  });

  it("else the liveliest state, then the earliest launch, whatever the input order", () => {
    assert.equal(pickInstance([a, b, c], undefined)?.InstanceId, "i-c");
    assert.equal(pickInstance([c, b, a], "other")?.InstanceId, "i-c");
  });

  it("is undefined for no candidates", () => {
    assert.equal(pickInstance([], "tok"), undefined);
  });
});

describe("instance tag plan", () => {
  const instanceTagChanges = (desired: Record<string, string>, actual: Record<string, string>) =>
    planTags(desired, actual, DEFAULT_TAG_POLICY);

  it("is empty when the tags already match", () => {
    const tags = { a: "1", b: "2" };
    const changes = instanceTagChanges(tags, { ...tags });
    assert.deepEqual(changes, { set: {}, remove: [] });
  });

  it("sets changed and missing tags and removes unwanted ones, keeping aws: tags", () => {
    const changes = instanceTagChanges(
      { a: "1", b: "2" },
      { a: "0", c: "x", "aws:cloudformation:stack-name": "s", "compute.cloud.com/uid": "other" },
    );
    assert.deepEqual(changes.set, { a: "1", b: "2" });
    assert.deepEqual(changes.remove, ["c", "compute.cloud.com/uid"]);
    assert.deepEqual(describeTagPlan(changes), "tags: set a, b; removed c, compute.cloud.com/uid");
  });
});

describe("instance filters", () => {
  it("find the live instances carrying the object's UID and managed-by tags", () => {
    const f = ownedFilters("uid-a");
    assert.deepEqual(
      f.find((x) => x.Name === "tag:compute.cloud.com/uid"),
      { Name: "tag:compute.cloud.com/uid", Values: ["uid-a"] },
    );
    assert.ok(f.some((x) => x.Name === "tag:compute.cloud.com/managed-by"));
    assert.deepEqual(f.find((x) => x.Name === "instance-state-name")?.Values, [...LIVE_STATES]);
  });

  it("find adoption candidates by namespace, name and kind, never shutting down or terminated", () => {
    const f = namedFilters({ namespace: "ns", name: "x".repeat(300), kind: "Ec2Instance" });
    assert.deepEqual(f.find((x) => x.Name === "tag:compute.cloud.com/name")?.Values, ["x".repeat(256)]);
    assert.deepEqual(f.find((x) => x.Name === "tag:compute.cloud.com/kind")?.Values, ["Ec2Instance"]);
    const states = f.find((x) => x.Name === "instance-state-name")?.Values ?? [];
    assert.ok(
      !states.includes("shutting-down") && !states.includes("terminated") && states.includes("running"),
    );
  });
});
