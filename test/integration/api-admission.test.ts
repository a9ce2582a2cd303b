/**
 * Admission of compute.cloud.com/v1 objects on a real kube-apiserver: defaults are filled in,
 * invalid objects are rejected with the documented messages, immutable fields stay immutable,
 * mutable ones change, and status is only written through the status subresource.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ControlPlane } from "../support/envtest.ts";
import { badCases } from "./api-bad-objects.ts";
import {
  create,
  errorMessage,
  mergePatch,
  resources,
  specWith,
  startApiControlPlane,
  valid,
  type Kind,
} from "./api-fixtures.ts";

describe("admission of compute.cloud.com/v1 objects", () => {
  let cp: ControlPlane;

  before(async () => {
    cp = await startApiControlPlane();
  });
  after(async () => {
    await cp?.stop();
  });

  it("accepts a fully specified valid object of each kind and fills in the defaults", async () => {
    for (const kind of Object.keys(resources) as Kind[]) {
      const res = await create(cp, kind, valid[kind]);
      assert.equal(res.status, 201, `${kind}: ${res.text}`);
      const spec = (res.body as { spec: Record<string, unknown> }).spec;
      assert.equal(spec["deletionPolicy"], "Delete");
      assert.equal(spec["adoptExisting"], false);
      assert.equal(spec["onDeletedOutOfBand"], "Recreate");
    }
    const ec2 = await create(cp, "Ec2Instance", { ...valid.Ec2Instance }, "defaults-ec2");
    const ec2spec = (ec2.body as { spec: Record<string, unknown> }).spec;
    assert.deepEqual([ec2spec["desiredState"], ec2spec["restartForUpdate"]], ["running", undefined]);
    const sqs = await create(cp, "SqsQueue", { queueName: "defaults", region: "us-east-1" });
    const spec = (sqs.body as { spec: Record<string, unknown> }).spec;
    assert.deepEqual(
      [spec["fifo"], spec["visibilityTimeoutSeconds"], spec["messageRetentionSeconds"]],
      [false, 30, 345600],
    );
    const s3 = await create(cp, "S3Bucket", { bucketName: "defaults-bucket", region: "us-east-1" });
    const s3spec = (s3.body as { spec: Record<string, unknown> }).spec;
    assert.deepEqual([s3spec["versioning"], s3spec["forceDelete"]], [false, false]);
  });

  it(`rejects ${badCases.length} invalid objects at admission with the documented messages`, async () => {
    assert.ok(badCases.length >= 20);
    const failures: string[] = [];
    for (const c of badCases) {
      const res = await create(cp, c.kind, c.spec);
      const msg = errorMessage(res);
      if (res.status !== 422) failures.push(`${c.name}: expected 422, got ${res.status}: ${msg}`);
      for (const fragment of c.expect) {
        if (!msg.includes(fragment))
          failures.push(`${c.name}: message lacks ${JSON.stringify(fragment)}: ${msg}`);
      }
    }
    assert.deepEqual(failures, []);
  });

  describe("immutable fields", () => {
    const names: Record<Kind, string> = {
      Ec2Instance: "immutable-ec2",
      S3Bucket: "immutable-s3",
      SqsQueue: "immutable-sqs",
    };

    before(async () => {
      for (const kind of Object.keys(resources) as Kind[]) {
        const res = await create(cp, kind, valid[kind], names[kind]);
        assert.equal(res.status, 201, res.text);
      }
    });

    const changes: { kind: Kind; patch: Record<string, unknown>; expect: string }[] = [
      { kind: "Ec2Instance", patch: { amiId: "ami-1e749f67" }, expect: "amiId is immutable" },
      {
        kind: "Ec2Instance",
        patch: { region: "us-east-2", availabilityZone: null },
        expect: "region is immutable",
      },
      {
        kind: "Ec2Instance",
        patch: { availabilityZone: "us-east-1b" },
        expect: "availabilityZone is immutable",
      },
      { kind: "Ec2Instance", patch: { availabilityZone: null }, expect: "availabilityZone is immutable" },
      { kind: "Ec2Instance", patch: { keyPair: "other" }, expect: "keyPair is immutable" },
      { kind: "Ec2Instance", patch: { keyPair: null }, expect: "keyPair is immutable" },
      { kind: "Ec2Instance", patch: { subnet: "subnet-89abcdef" }, expect: "subnet is immutable" },
      { kind: "Ec2Instance", patch: { associatePublicIP: false }, expect: "associatePublicIP is immutable" },
      {
        kind: "Ec2Instance",
        patch: { marketOptions: { marketType: "spot" } },
        expect: "marketOptions is immutable: EC2 fixes the market at launch",
      },
      {
        kind: "Ec2Instance",
        patch: { placement: { tenancy: "dedicated" } },
        expect: "placement is immutable: tenancy and placement group are fixed at launch",
      },
      {
        kind: "Ec2Instance",
        patch: { privateIpAddress: "10.0.0.6" },
        expect: "privateIpAddress is immutable: the primary private address is fixed at launch",
      },
      {
        kind: "Ec2Instance",
        patch: { hibernation: false },
        expect: "hibernation is immutable: EC2 enables it at launch only",
      },
      {
        kind: "Ec2Instance",
        patch: { storage: { rootVolume: { size: 11 } } },
        expect: "storage is immutable",
      },
      {
        kind: "Ec2Instance",
        patch: { storage: { rootVolume: { kmsKeyId: null } } },
        expect: "storage is immutable: block devices are fixed at launch, and volumes are not resized",
      },
      {
        kind: "Ec2Instance",
        patch: {
          storage: { additionalVolumes: [{ deviceName: "/dev/sdf", size: 20, deleteOnTermination: true }] },
        },
        expect: "storage is immutable",
      },
      { kind: "Ec2Instance", patch: { storage: null }, expect: "storage is immutable" },
      { kind: "S3Bucket", patch: { bucketName: "other-bucket" }, expect: "bucketName is immutable" },
      { kind: "S3Bucket", patch: { region: "us-east-1" }, expect: "region is immutable" },
      { kind: "SqsQueue", patch: { queueName: "renamed" }, expect: "queueName is immutable" },
      { kind: "SqsQueue", patch: { fifo: true, queueName: "orders.fifo" }, expect: "fifo is immutable" },
      { kind: "SqsQueue", patch: { region: "eu-central-1" }, expect: "region is immutable" },
    ];

    it(`rejects ${changes.length} changes of immutable fields`, async () => {
      const failures: string[] = [];
      for (const c of changes) {
        const res = await mergePatch(cp, c.kind, names[c.kind], { spec: c.patch });
        const msg = errorMessage(res);
        if (res.status !== 422)
          failures.push(`${c.kind} ${JSON.stringify(c.patch)}: got ${res.status}: ${msg}`);
        else if (!msg.includes(c.expect)) failures.push(`${c.kind} ${JSON.stringify(c.patch)}: ${msg}`);
      }
      assert.deepEqual(failures, []);
    });

    it("rejects adding an optional immutable field after creation", async () => {
      const res = await create(
        cp,
        "Ec2Instance",
        specWith("Ec2Instance", { keyPair: undefined }),
        "no-keypair",
      );
      assert.equal(res.status, 201, res.text);
      const add = await mergePatch(cp, "Ec2Instance", "no-keypair", { spec: { keyPair: "late" } });
      assert.equal(add.status, 422);
      assert.match(errorMessage(add), /spec\.keyPair: Invalid value: .*keyPair is immutable/);
    });

    it("keeps objectLock.enabled as it was at creation, and lets defaultRetention change", async () => {
      const lockedSpec = specWith("S3Bucket", {
        versioning: true,
        objectLock: { enabled: true, defaultRetention: { mode: "GOVERNANCE", days: 1 } },
      });
      assert.equal((await create(cp, "S3Bucket", lockedSpec, "locked-s3")).status, 201);
      const refused: Record<string, unknown>[] = [
        { objectLock: { enabled: false, defaultRetention: null } },
        { objectLock: null },
      ];
      for (const spec of refused) {
        const res = await mergePatch(cp, "S3Bucket", "locked-s3", { spec });
        assert.equal(res.status, 422, JSON.stringify(spec));
        assert.match(
          errorMessage(res),
          /spec\.objectLock: Invalid value: .*objectLock\.enabled is immutable: S3 turns Object Lock on only when it creates the bucket/,
        );
      }
      const retention = await mergePatch(cp, "S3Bucket", "locked-s3", {
        spec: { objectLock: { defaultRetention: { mode: "COMPLIANCE", days: null, years: 2 } } },
      });
      assert.equal(retention.status, 200, retention.text);
      const unlocked = await mergePatch(cp, "S3Bucket", names.S3Bucket, {
        spec: { versioning: true, objectLock: { enabled: true } },
      });
      assert.equal(unlocked.status, 422);
      assert.match(errorMessage(unlocked), /objectLock\.enabled is immutable/);
      const off = await mergePatch(cp, "S3Bucket", names.S3Bucket, {
        spec: { objectLock: { enabled: false } },
      });
      assert.equal(off.status, 200, off.text);
      const suspend = await mergePatch(cp, "S3Bucket", "locked-s3", { spec: { versioning: false } });
      assert.equal(suspend.status, 422);
      assert.match(errorMessage(suspend), /objectLock\.enabled needs versioning: true/);
    });

    it("accepts a redirect website behind full Block Public Access, and CORS rules within AWS's limits", async () => {
      const spec = specWith("S3Bucket", {
        publicAccessBlock: {
          blockPublicAcls: true,
          ignorePublicAcls: true,
          blockPublicPolicy: true,
          restrictPublicBuckets: true,
        },
        website: { redirectAllRequestsTo: { hostName: "www.example.com", protocol: "https" } },
        cors: Array.from({ length: 100 }, (_, i) => ({
          id: `r${i}`,
          allowedMethods: ["GET", "HEAD"],
          allowedOrigins: ["https://*.example.com"],
          allowedHeaders: ["*"],
        })),
      });
      const res = await create(cp, "S3Bucket", spec, "redirect-s3");
      assert.equal(res.status, 201, res.text);
      const served = await create(
        cp,
        "S3Bucket",
        specWith("S3Bucket", { publicAccessBlock: {}, website: { indexDocument: "index.html" } }),
        "website-s3",
      );
      assert.equal(served.status, 201, served.text);
    });

    it("accepts changes of the mutable fields", async () => {
      const accepted: [Kind, Record<string, unknown>][] = [
        [
          "Ec2Instance",
          {
            tags: { Name: "renamed" },
            instanceType: "t3.large",
            desiredState: "stopped",
            restartForUpdate: true,
            deletionPolicy: "Retain",
            adoptExisting: true,
            onDeletedOutOfBand: "Report",
            securityGroups: ["sg-89abcdef", "sg-01234567"],
            disableApiTermination: true,
            disableApiStop: true,
            instanceInitiatedShutdownBehavior: "terminate",
            monitoring: true,
            creditSpecification: "unlimited",
            userData: "#!/bin/sh\necho changed\n",
          },
        ],
        [
          "Ec2Instance",
          { securityGroups: null, disableApiTermination: null, creditSpecification: null, userData: null },
        ],
        ["S3Bucket", { versioning: true, forceDelete: true, tags: null, deletionPolicy: "Retain" }],
        ["SqsQueue", { visibilityTimeoutSeconds: 120, messageRetentionSeconds: 60, tags: { a: "b" } }],
      ];
      for (const [kind, patch] of accepted) {
        const res = await mergePatch(cp, kind, names[kind], { spec: patch });
        assert.equal(res.status, 200, `${kind}: ${res.text}`);
        const generation = (res.body as { metadata: { generation: number } }).metadata.generation;
        assert.ok(generation >= 2, `${kind} generation did not move`);
      }
    });
  });

  describe("managementPolicy", () => {
    it("accepts an observe-only object of each kind with its identity alone, defaults filled in", async () => {
      const identities: Record<Kind, Record<string, unknown>> = {
        Ec2Instance: { region: "us-east-1", instanceId: "i-0123456789abcdef0" },
        S3Bucket: { region: "us-east-1", bucketName: "observed-bucket" },
        SqsQueue: { region: "us-east-1", queueName: "observed" },
      };
      for (const kind of Object.keys(resources) as Kind[]) {
        const res = await create(cp, kind, { ...identities[kind], managementPolicy: "ObserveOnly" });
        assert.equal(res.status, 201, `${kind}: ${res.text}`);
        const spec = (res.body as { spec: Record<string, unknown> }).spec;
        assert.equal(spec["managementPolicy"], "ObserveOnly");
        assert.equal(spec["adoptExisting"], false);
      }
      const full = await create(cp, "SqsQueue", valid.SqsQueue);
      assert.equal((full.body as { spec: Record<string, unknown> }).spec["managementPolicy"], "Full");
    });

    it("keeps instanceId immutable, and lets an object switched to Full keep it but not gain it", async () => {
      const observed = {
        region: "us-east-1",
        instanceId: "i-0123456789abcdef0",
        managementPolicy: "ObserveOnly",
      };
      assert.equal((await create(cp, "Ec2Instance", observed, "observed-ec2")).status, 201);
      const changed = await mergePatch(cp, "Ec2Instance", "observed-ec2", {
        spec: { instanceId: "i-0123456789abcdef1" },
      });
      assert.equal(changed.status, 422);
      assert.match(errorMessage(changed), /instanceId is immutable/);
      const noLaunch = await mergePatch(cp, "Ec2Instance", "observed-ec2", {
        spec: { managementPolicy: "Full" },
      });
      assert.equal(noLaunch.status, 422);
      assert.match(errorMessage(noLaunch), /spec\.instanceType: Required value/);
      const toFull = await mergePatch(cp, "Ec2Instance", "observed-ec2", {
        spec: { managementPolicy: "Full", instanceType: "t3.micro", amiId: "ami-12c6146b" },
      });
      assert.equal(toFull.status, 200, toFull.text);
      assert.equal((await create(cp, "Ec2Instance", valid.Ec2Instance, "managed-ec2")).status, 201);
      const gained = await mergePatch(cp, "Ec2Instance", "managed-ec2", {
        spec: { instanceId: "i-0123456789abcdef0" },
      });
      assert.equal(gained.status, 422);
      assert.match(errorMessage(gained), /instanceId is allowed only with managementPolicy ObserveOnly/);
      const toObserve = await mergePatch(cp, "Ec2Instance", "managed-ec2", {
        spec: { managementPolicy: "ObserveOnly", instanceId: "i-0123456789abcdef0" },
      });
      assert.equal(toObserve.status, 200, toObserve.text);
    });
  });

  describe("status subresource", () => {
    it("ignores status on the main resource and validates conditions on /status", async () => {
      const created = await create(cp, "Ec2Instance", valid.Ec2Instance, "status-ec2");
      assert.equal(created.status, 201, created.text);
      const viaMain = await mergePatch(cp, "Ec2Instance", "status-ec2", { status: { state: "running" } });
      assert.equal(viaMain.status, 200);
      assert.equal((viaMain.body as { status?: unknown }).status, undefined);

      const bad = await mergePatch(
        cp,
        "Ec2Instance",
        "status-ec2",
        {
          status: {
            conditions: [
              {
                type: "Ready",
                status: "Maybe",
                reason: "X",
                message: "",
                lastTransitionTime: "2025-01-01T00:00:00Z",
              },
            ],
          },
        },
        "status",
      );
      assert.equal(bad.status, 422);
      assert.match(errorMessage(bad), /status\.conditions\[0\]\.status: Unsupported value: "Maybe"/);
    });
  });
});
