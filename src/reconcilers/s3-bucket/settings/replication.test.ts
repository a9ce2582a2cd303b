import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { callsAnswering } from "../testing/bucket-calls.ts";
import { replication } from "./replication.ts";

const ROLE = "arn:aws:iam::123456789012:role/replication";
const DEST = "arn:aws:s3:::backup";

describe("replication rules as S3 gives them", () => {
  it("reads the prefix of an And filter, and names what a rule does that the spec cannot ask for", async () => {
    const { s3 } = callsAnswering({
      ReplicationConfiguration: {
        Role: ROLE,
        Rules: [
          {
            ID: "kms",
            Priority: 1,
            Status: "Enabled",
            Filter: { And: { Prefix: "logs/", Tags: [{ Key: "tier", Value: "hot" }] } },
            SourceSelectionCriteria: { SseKmsEncryptedObjects: { Status: "Enabled" } },
            Destination: {
              Bucket: DEST,
              Account: "210987654321",
              AccessControlTranslation: { Owner: "Destination" },
              EncryptionConfiguration: { ReplicaKmsKeyID: "arn:aws:kms:us-east-1:210987654321:key/k" },
              ReplicationTime: { Status: "Enabled", Time: { Minutes: 15 } },
              Metrics: { Status: "Enabled", EventThreshold: { Minutes: 15 } },
            },
            DeleteMarkerReplication: { Status: "Disabled" },
            ExistingObjectReplication: { Status: "Enabled" },
          },
          { ID: "v1", Status: "Enabled", Prefix: "old/", Destination: { Bucket: DEST } },
          {
            ID: "plain",
            Priority: 2,
            Status: "Enabled",
            Filter: { Prefix: "" },
            Destination: { Bucket: DEST, StorageClass: "STANDARD_IA" },
            DeleteMarkerReplication: { Status: "Enabled" },
          },
        ],
      },
    });
    const r = await replication.read(s3);
    assert.ok(r !== null);
    assert.deepEqual(
      r.rules.map((x) => [x.id, x.prefix, x.notInSpec]),
      [
        [
          "kms",
          "logs/",
          [
            "changes the replicas' owner",
            "encrypts replicas with a KMS key",
            "filters by tags",
            "has Replication Time Control",
            "has replication metrics",
            "names the destination's account",
            "replicates SSE-KMS encrypted objects",
            "replicates existing objects",
          ],
        ],
        ["plain", "", []],
        ["v1", "old/", ["is a rule of the first schema (no filter)"]],
      ],
    );
    // The export leaves such a configuration unmanaged, naming each rule: adopting it as the
    // spec would write it would remove what the spec cannot say.
    const spec = replication.specOf(r, { region: "us-east-1", refOf: () => undefined });
    assert.deepEqual(spec.fields, {});
    assert.equal(spec.omitted.length, 2);
    assert.match(
      spec.omitted[0] ?? "",
      /^replication: rule kms changes the replicas' owner, .* \(spec\.replication left unset: /,
    );
    assert.match(spec.omitted[1] ?? "", /^replication: rule v1 is a rule of the first schema/);
    // A plan shows why the bucket's rule differs from a managed one.
    const shown = replication.toSpec(r) as { rules: { id: string; notInSpec?: string[] }[] };
    assert.deepEqual(shown.rules.find((x) => x.id === "v1")?.notInSpec, [
      "is a rule of the first schema (no filter)",
    ]);
    assert.equal(shown.rules.find((x) => x.id === "plain")?.notInSpec, undefined);
  });

  it("writes a configuration the spec can ask for, and wants rules that do nothing beyond it", async () => {
    const { s3 } = callsAnswering({
      ReplicationConfiguration: {
        Role: ROLE,
        Rules: [
          {
            ID: "plain",
            Priority: 1,
            Status: "Enabled",
            Filter: { Prefix: "data/" },
            Destination: { Bucket: DEST },
            DeleteMarkerReplication: { Status: "Enabled" },
          },
        ],
      },
    });
    const r = await replication.read(s3);
    assert.ok(r !== null);
    const spec = replication.specOf(r, { region: "us-east-1", refOf: () => undefined });
    assert.deepEqual(spec.omitted, []);
    const desired = replication.desired({ replication: spec.fields["replication"] } as never, {} as never);
    assert.deepEqual(desired, r, "the exported spec asks for what the bucket has");
  });
});
