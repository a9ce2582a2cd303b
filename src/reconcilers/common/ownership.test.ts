import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ownershipTags } from "../../aws/ownership.ts";
import type { ManagedObject } from "./driver.ts";
import { AccountAdoption } from "../../api/v1/index.ts";
import {
  adoptionGrant,
  adoptionRefusal,
  isOwnedBy,
  NO_ADOPTION,
  verdictOf,
  type AdoptionIdentity,
  type ForeignClaim,
  type InstallAdoption,
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

const OWN = { name: undefined };

function refusal(
  claim: ForeignClaim,
  opts: {
    adoptExisting?: boolean;
    liveness?: OwnerLiveness;
    install?: InstallAdoption;
    identity?: AdoptionIdentity;
  } = {},
) {
  const asked: string[] = [];
  const o = obj(opts.adoptExisting ?? true);
  const r = adoptionRefusal(o, claim, {
    noun: "queue",
    grant: adoptionGrant("team-b", opts.identity ?? OWN, opts.install ?? GRANTED),
    directory: {
      liveness: (o) => {
        asked.push(`${o.kind}/${o.namespace}/${o.name}/${o.uid}`);
        return opts.liveness ?? "gone";
      },
    },
  });
  return { reason: r?.reason, message: r?.message, asked };
}

const GRANTED: InstallAdoption = { policy: "enabled", namespaces: [] };
const teamBOwn = ownershipTags({ uid: "uid-old", namespace: "team-b", name: "old", kind: "SqsQueue" });

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

describe("adoptionGrant", () => {
  it("grants nothing to the operator's own identity by default", () => {
    const g = adoptionGrant("team-b", OWN, NO_ADOPTION);
    assert.equal(g.granted, false);
    assert.match(
      g.granted ? "" : g.missing,
      /namespace team-b .*operator's own AWS identity.*--adoption=enabled .*--adoption-namespaces=team-b/,
    );
    assert.equal(
      adoptionGrant("team-b", undefined, NO_ADOPTION).granted,
      false,
      "no resolver: the own identity",
    );
  });

  it("grants the operator's own identity in every namespace, or in the listed ones", () => {
    assert.equal(adoptionGrant("team-b", OWN, GRANTED).granted, true);
    const listed: InstallAdoption = { policy: "disabled", namespaces: ["team-a", "team-b"] };
    assert.equal(adoptionGrant("team-b", OWN, listed).granted, true);
    assert.equal(adoptionGrant("team-c", OWN, listed).granted, false);
  });

  it("lets an AwsAccount alone decide for its objects, whatever the install grants", () => {
    const allowed = { name: "tenant", adoption: AccountAdoption.Allowed };
    const disallowed = { name: "tenant", adoption: AccountAdoption.Disallowed };
    assert.equal(adoptionGrant("team-b", allowed, NO_ADOPTION).granted, true);
    const g = adoptionGrant("team-b", disallowed, GRANTED);
    assert.equal(g.granted, false);
    assert.match(g.granted ? "" : g.missing, /AwsAccount tenant.*spec\.adoption: Allowed on that AwsAccount/);
    assert.equal(adoptionGrant("team-b", { name: "tenant" }, GRANTED).granted, false, "unset: Disallowed");
  });
});

describe("adoptionRefusal", () => {
  it("never adopts from an object that still exists, whatever the spec or the grant says", () => {
    for (const adoptExisting of [true, false]) {
      const r = refusal(foreign(teamA), { adoptExisting, liveness: "live" });
      assert.equal(r.reason, "OwnedByAnotherObject");
      assert.match(r.message ?? "", /belongs to SqsQueue team-a\/jobs/);
      assert.deepEqual(r.asked, ["SqsQueue/team-a/jobs/uid-a"]);
    }
    assert.equal(refusal(foreign(teamBOwn), { liveness: "live" }).reason, "OwnedByAnotherObject");
  });

  it("treats an owner it cannot see as existing", () => {
    const r = refusal(foreign(teamA), { liveness: "unknown" });
    assert.equal(r.reason, "OwnedByAnotherObject");
    assert.match(r.message ?? "", /cannot see that object/);
  });

  it("lets a namespace take back what its own gone object left, without a grant", () => {
    assert.equal(refusal(foreign(teamBOwn), { install: NO_ADOPTION }).reason, undefined);
    assert.equal(
      refusal(foreign(teamBOwn), { identity: { name: "tenant", adoption: "Disallowed" } }).reason,
      undefined,
    );
    assert.equal(refusal(foreign(teamBOwn), { adoptExisting: false }).reason, "NotOwned");
  });

  it("adopts what another namespace's gone object left only with the grant", () => {
    const r = refusal(foreign(teamA), { install: NO_ADOPTION });
    assert.equal(r.reason, "AdoptionNotAllowed");
    assert.match(r.message ?? "", /left by SqsQueue team-a\/jobs of another namespace/);
    assert.match(r.message ?? "", /--adoption-namespaces=team-b.*Nothing was written to AWS/);
    assert.equal(refusal(foreign(teamA)).reason, undefined);
    assert.equal(refusal(foreign(teamA), { adoptExisting: false }).reason, "NotOwned");
  });

  it("adopts a never-managed resource only when asked and granted", () => {
    assert.equal(refusal(foreign({})).reason, undefined);
    assert.equal(refusal(foreign({}), { adoptExisting: false }).reason, "NotOwned");
    const own = refusal(foreign({}), { install: NO_ADOPTION });
    assert.equal(own.reason, "AdoptionNotAllowed");
    assert.match(
      own.message ?? "",
      /was never managed by this operator; adopting it is a right the cluster admin grants/,
    );
    const account = refusal(foreign({}), { identity: { name: "tenant", adoption: "Disallowed" } });
    assert.equal(account.reason, "AdoptionNotAllowed");
    assert.match(account.message ?? "", /AwsAccount tenant/);
    assert.equal(
      refusal(foreign({}), { identity: { name: "tenant", adoption: "Allowed" }, install: NO_ADOPTION })
        .reason,
      undefined,
    );
  });

  it("takes a managed-by tag without an owner for no owner's leaving", () => {
    const r = refusal(foreign({ "compute.cloud.com/managed-by": "kubeprovisioner" }), {
      install: NO_ADOPTION,
    });
    assert.equal(r.reason, "AdoptionNotAllowed");
    assert.match(r.message ?? "", /carries no owner's UID tag/);
  });

  it("never adopts through a recorded ID", () => {
    const r = refusal(foreign({}, { adoptable: false }));
    assert.equal(r.reason, "NotOwned");
    assert.match(r.message ?? "", /recorded in status/);
  });
});
