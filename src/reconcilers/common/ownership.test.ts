import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ownershipTags } from "../../aws/ownership.ts";
import type { ManagedObject } from "./driver.ts";
import {
  adoptionRefusal,
  isOwnedBy,
  verdictOf,
  type AdoptionPolicy,
  type ForeignClaim,
  type OwnerLiveness,
} from "./ownership.ts";

function obj(adoptExisting = false): ManagedObject {
  return {
    apiVersion: "compute.cloud.com/v1",
    kind: "SqsQueue",
    metadata: { namespace: "team-b", name: "jobs", uid: "uid-b" },
    spec: { region: "us-east-1", deletionPolicy: "Delete", adoptExisting, onDeletedOutOfBand: "Recreate" },
  };
}

const teamA = ownershipTags({ uid: "uid-a", namespace: "team-a", name: "jobs", kind: "SqsQueue" });

function foreign(tags: Record<string, string>, opts: { adoptable?: boolean } = {}): ForeignClaim {
  const v = verdictOf(tags, obj(), opts);
  assert.equal(v.ownership, "foreign");
  if (v.ownership !== "foreign") throw new Error("unreachable");
  return v.foreign;
}

function refusal(
  claim: ForeignClaim,
  opts: { adoptExisting?: boolean; liveness?: OwnerLiveness; adoption?: AdoptionPolicy } = {},
) {
  const asked: string[] = [];
  const r = adoptionRefusal(obj(opts.adoptExisting ?? true), claim, {
    noun: "queue",
    adoption: opts.adoption ?? "enabled",
    directory: {
      liveness: (o) => {
        asked.push(`${o.kind}/${o.namespace}/${o.name}/${o.uid}`);
        return opts.liveness ?? "gone";
      },
    },
  });
  return { reason: r?.reason, message: r?.message, asked };
}

describe("verdictOf", () => {
  it("owns only a resource carrying the object's UID tag", () => {
    const own = ownershipTags({ uid: "uid-b", namespace: "team-b", name: "jobs", kind: "SqsQueue" });
    assert.deepEqual(verdictOf(own, obj()), { ownership: "owned" });
    assert.equal(isOwnedBy(own, obj()), true);
    assert.equal(isOwnedBy(teamA, obj()), false);
    assert.equal(isOwnedBy({}, obj()), false);
  });

  it("names the tagged owner and whether this operator managed the resource", () => {
    assert.deepEqual(foreign(teamA), {
      owner: { uid: "uid-a", namespace: "team-a", name: "jobs", kind: "SqsQueue" },
      managedByOperator: true,
      adoptable: true,
    });
    assert.deepEqual(foreign({ team: "x" }), { owner: undefined, managedByOperator: false, adoptable: true });
  });

  it("takes an untagged resource as own only on the driver's evidence, never one tagged for another", () => {
    assert.deepEqual(verdictOf({}, obj(), { untaggedIsOwn: true }), { ownership: "owned" });
    assert.equal(verdictOf(teamA, obj(), { untaggedIsOwn: true }).ownership, "foreign");
  });
});

describe("adoptionRefusal", () => {
  it("never adopts from an object that still exists, whatever the spec says", () => {
    for (const adoptExisting of [true, false]) {
      const r = refusal(foreign(teamA), { adoptExisting, liveness: "live" });
      assert.equal(r.reason, "OwnedByAnotherObject");
      assert.match(r.message ?? "", /belongs to SqsQueue team-a\/jobs/);
      assert.deepEqual(r.asked, ["SqsQueue/team-a/jobs/uid-a"]);
    }
  });

  it("treats an owner it cannot see as existing", () => {
    const r = refusal(foreign(teamA), { liveness: "unknown" });
    assert.equal(r.reason, "OwnedByAnotherObject");
    assert.match(r.message ?? "", /cannot see that object/);
  });

  it("adopts what a gone owner left, when asked, even with adoption disabled", () => {
    assert.equal(refusal(foreign(teamA), { adoption: "disabled" }).reason, undefined);
    assert.equal(refusal(foreign(teamA), { adoptExisting: false }).reason, "NotOwned");
  });

  it("adopts a never-managed resource only when asked and allowed", () => {
    assert.equal(refusal(foreign({})).reason, undefined);
    assert.equal(refusal(foreign({}), { adoptExisting: false }).reason, "NotOwned");
    const disabled = refusal(foreign({}), { adoption: "disabled" });
    assert.equal(disabled.reason, "AdoptionDisabled");
    assert.match(disabled.message ?? "", /--adoption=disabled/);
  });

  it("never adopts through a recorded ID", () => {
    const r = refusal(foreign({}, { adoptable: false }));
    assert.equal(r.reason, "NotOwned");
    assert.match(r.message ?? "", /recorded in status/);
  });
});
