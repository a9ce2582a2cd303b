/**
 * The generated CRDs on a real kube-apiserver: they install and are served, admission rejects
 * invalid objects with the documented messages, immutable fields stay immutable, the samples are
 * accepted, `kubectl explain` teaches the API, and Table requests carry the printer columns.
 */
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { request as httpsRequest, type RequestOptions } from "node:https";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { resourcePath, type ResourceType } from "../../src/runtime/kube/object.ts";
import {
  API_VERSION,
  Ec2InstanceResource,
  S3BucketResource,
  SqsQueueResource,
  type Ec2InstanceSpecInput,
  type S3BucketSpecInput,
  type SqsQueueSpecInput,
} from "../../src/api/v1/index.ts";
import { startControlPlane, type ControlPlane, type RawResponse } from "../support/envtest.ts";
import { repoRoot, waitFor } from "../support/process.ts";

const NS = "api-test";
const resources = {
  Ec2Instance: Ec2InstanceResource,
  S3Bucket: S3BucketResource,
  SqsQueue: SqsQueueResource,
};
type Kind = keyof typeof resources;

const validEc2: Ec2InstanceSpecInput = {
  instanceType: "t3.micro",
  amiId: "ami-12c6146b",
  region: "us-east-1",
  availabilityZone: "us-east-1a",
  keyPair: "ops",
  securityGroups: ["sg-0123456789abcdef0"],
  subnet: "subnet-01234567",
  userData: "#!/bin/sh\necho hi\n",
  tags: { Name: "web", "team/owner": "platform" },
  storage: {
    rootVolume: { size: 10, type: "gp3", deviceName: "/dev/sda1", encrypted: true },
    additionalVolumes: [{ deviceName: "/dev/sdf", size: 20, type: "gp3" }],
  },
  associatePublicIP: true,
};
const validS3: S3BucketSpecInput = {
  bucketName: "my-bucket.example-1",
  region: "eu-west-1",
  tags: { env: "dev" },
};
const validSqs: SqsQueueSpecInput = { queueName: "orders", region: "us-east-1" };
const valid: Record<Kind, object> = { Ec2Instance: validEc2, S3Bucket: validS3, SqsQueue: validSqs };

let seq = 0;
function manifest(kind: Kind, spec: unknown, name = `${kind.toLowerCase()}-${++seq}`): object {
  return { apiVersion: API_VERSION, kind, metadata: { name, namespace: NS }, spec };
}

/** `valid[kind]` with `patch` merged in at the top level of spec; `undefined` removes a field. */
function specWith(kind: Kind, patch: Record<string, unknown>): Record<string, unknown> {
  const spec: Record<string, unknown> = { ...structuredClone(valid[kind]), ...patch };
  for (const [k, v] of Object.entries(patch)) if (v === undefined) delete spec[k];
  return spec;
}

function longString(n: number): string {
  return "a".repeat(n);
}

interface BadCase {
  name: string;
  kind: Kind;
  spec: Record<string, unknown>;
  /** Fragments the API server's error message must contain. */
  expect: string[];
}

const badCases: BadCase[] = [
  // Ec2Instance
  {
    name: "EC2 without instanceType",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { instanceType: undefined }),
    expect: ["spec.instanceType: Required value"],
  },
  {
    name: "EC2 with a malformed AMI ID",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { amiId: "ami-XYZ" }),
    expect: ["spec.amiId", "should match"],
  },
  {
    name: "EC2 with an upper-case region",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { region: "US-EAST-1" }),
    expect: ["spec.region", "should match"],
  },
  {
    name: "EC2 with a zone outside its region",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { availabilityZone: "eu-west-1a" }),
    expect: ["spec.availabilityZone", "availabilityZone must be a zone of region"],
  },
  {
    name: "EC2 with a security group name instead of an ID",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { securityGroups: ["default"] }),
    expect: ["spec.securityGroups[0]", "should match"],
  },
  {
    name: "EC2 with a duplicate security group",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { securityGroups: ["sg-01234567", "sg-01234567"] }),
    expect: ["spec.securityGroups[1]", "Duplicate value"],
  },
  {
    name: "EC2 with 17 security groups",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      securityGroups: Array.from({ length: 17 }, (_, i) => `sg-${String(i).padStart(8, "0")}`),
    }),
    expect: ["spec.securityGroups", "must have at most 16 items"],
  },
  {
    name: "EC2 booting from an st1 root volume",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { storage: { rootVolume: { type: "st1", size: 500 } } }),
    expect: ["spec.storage.rootVolume.type", 'Unsupported value: "st1"'],
  },
  {
    name: "EC2 with a 100 GiB sc1 volume",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: { additionalVolumes: [{ deviceName: "/dev/sdg", size: 100, type: "sc1" }] },
    }),
    expect: ["spec.storage.additionalVolumes[0]", "st1 and sc1 volumes must be at least 125 GiB"],
  },
  {
    name: "EC2 with a 2 GiB io1 volume",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: { additionalVolumes: [{ deviceName: "/dev/sdg", size: 2, type: "io1" }] },
    }),
    expect: ["io1 and io2 volumes must be at least 4 GiB"],
  },
  {
    name: "EC2 with a 20000 GiB gp3 volume",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: { additionalVolumes: [{ deviceName: "/dev/sdg", size: 20000 }] },
    }),
    expect: ["volumes larger than 16384 GiB must be of type io2"],
  },
  {
    name: "EC2 with a 2000 GiB magnetic root volume",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { storage: { rootVolume: { size: 2000, type: "standard" } } }),
    expect: ["spec.storage.rootVolume", "standard (magnetic) volumes can be at most 1024 GiB"],
  },
  {
    name: "EC2 with a data volume on the root device",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: {
        rootVolume: { deviceName: "/dev/xvda" },
        additionalVolumes: [{ deviceName: "/dev/xvda", size: 5 }],
      },
    }),
    expect: ["spec.storage", "an additional volume cannot use the root volume's deviceName"],
  },
  {
    name: "EC2 with two data volumes on one device",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", {
      storage: {
        additionalVolumes: [
          { deviceName: "/dev/sdf", size: 5 },
          { deviceName: "/dev/sdf", size: 6 },
        ],
      },
    }),
    expect: ["spec.storage.additionalVolumes[1]", "Duplicate value"],
  },
  {
    name: "EC2 with a data volume without a device name",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { storage: { additionalVolumes: [{ size: 5 }] } }),
    expect: ["spec.storage.additionalVolumes[0].deviceName: Required value"],
  },
  {
    name: "EC2 with a bad device name",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { storage: { additionalVolumes: [{ deviceName: "sdf", size: 5 }] } }),
    expect: ["spec.storage.additionalVolumes[0].deviceName", "should match"],
  },
  {
    name: "EC2 with 16385 characters of user data",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { userData: longString(16385) }),
    expect: ["spec.userData", "Too long"],
  },
  {
    name: "EC2 with an unknown deletion policy",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { deletionPolicy: "Orphan" }),
    expect: ["spec.deletionPolicy", 'Unsupported value: "Orphan"'],
  },
  {
    name: "EC2 with an aws: tag",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { tags: { "aws:cloudformation:stack-name": "x" } }),
    expect: ["spec.tags", "tag keys starting with aws: are reserved by AWS"],
  },
  {
    name: "EC2 forging an ownership tag",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { tags: { "compute.cloud.com/uid": "x" } }),
    expect: ["spec.tags", "reserved for the operator's ownership tags"],
  },
  {
    name: "EC2 with an unknown out-of-band policy",
    kind: "Ec2Instance",
    spec: specWith("Ec2Instance", { onDeletedOutOfBand: "Ignore" }),
    expect: ["spec.onDeletedOutOfBand", 'Unsupported value: "Ignore"'],
  },
  // Tags (shared rules, checked on S3Bucket and SqsQueue)
  {
    name: "S3 with a 257-character tag value",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { tags: { env: longString(257) } }),
    expect: ["spec.tags.env", "Too long"],
  },
  {
    name: "S3 with a 129-character tag key",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { tags: { [longString(129)]: "v" } }),
    expect: ["spec.tags", "tag keys must be 1 to 128 characters"],
  },
  {
    name: "SQS with a tag key containing #",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { tags: { "cost#center": "v" } }),
    expect: ["spec.tags", "tag keys may contain only letters, digits, spaces and _ . : / = + - @"],
  },
  {
    name: "SQS with 51 tags",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", {
      tags: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])),
    }),
    expect: ["spec.tags", "must have at most 50 items"],
  },
  // S3Bucket
  {
    name: "S3 with upper-case letters in the name",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { bucketName: "My-Bucket" }),
    expect: ["spec.bucketName", "should match"],
  },
  {
    name: "S3 with a two-character name",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { bucketName: "ab" }),
    expect: ["spec.bucketName", "should be at least 3 chars long"],
  },
  {
    name: "S3 with adjacent periods",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { bucketName: "my..bucket" }),
    expect: ["spec.bucketName", "bucketName must not contain two adjacent periods"],
  },
  {
    name: "S3 named like an IP address",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { bucketName: "192.168.5.4" }),
    expect: ["bucketName must not be formatted as an IP address"],
  },
  {
    name: "S3 with a reserved prefix",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { bucketName: "xn--bucket" }),
    expect: ["bucketName must not start with the reserved prefixes"],
  },
  {
    name: "S3 with a reserved suffix",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { bucketName: "assets-s3alias" }),
    expect: ["bucketName must not end with the reserved suffixes"],
  },
  {
    name: "S3 with versioning as a string",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { versioning: "yes" }),
    expect: ["spec.versioning", "must be of type boolean"],
  },
  {
    name: "S3 without region",
    kind: "S3Bucket",
    spec: specWith("S3Bucket", { region: undefined }),
    expect: ["spec.region: Required value"],
  },
  // SqsQueue
  {
    name: "SQS FIFO queue without the .fifo suffix",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { fifo: true }),
    expect: ["spec.queueName", "a FIFO queue's queueName must end with .fifo"],
  },
  {
    name: "SQS standard queue with the .fifo suffix",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { queueName: "orders.fifo" }),
    expect: ["spec.queueName", "which SQS reserves for FIFO queues"],
  },
  {
    name: "SQS with a 12-hour-and-one-second visibility timeout",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { visibilityTimeoutSeconds: 43201 }),
    expect: ["spec.visibilityTimeoutSeconds", "should be less than or equal to 43200"],
  },
  {
    name: "SQS with 59 seconds of retention",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { messageRetentionSeconds: 59 }),
    expect: ["spec.messageRetentionSeconds", "should be greater than or equal to 60"],
  },
  {
    name: "SQS with more than 14 days of retention",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { messageRetentionSeconds: 1209601 }),
    expect: ["spec.messageRetentionSeconds", "should be less than or equal to 1209600"],
  },
  {
    name: "SQS with a space in the name",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { queueName: "my queue" }),
    expect: ["spec.queueName", "should match"],
  },
  {
    name: "SQS with an 81-character name",
    kind: "SqsQueue",
    spec: specWith("SqsQueue", { queueName: longString(81) }),
    expect: ["spec.queueName", "Too long"],
  },
];

/** A request with arbitrary headers, authenticated as the admin of the control plane. */
async function rawRequest(
  cp: ControlPlane,
  urlPath: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: unknown }> {
  const kc = cp.kubeConfig();
  const opts: RequestOptions = { method: "GET", headers };
  await kc.applyToHTTPSOptions(opts);
  return await new Promise((resolve, reject) => {
    const req = httpsRequest(new URL(urlPath, cp.server), opts, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

function collection(r: ResourceType): string {
  return resourcePath(r, { namespace: NS });
}

function errorMessage(res: RawResponse): string {
  return (res.body as { message?: string }).message ?? res.text;
}

async function create(cp: ControlPlane, kind: Kind, spec: unknown, name?: string): Promise<RawResponse> {
  return await cp.request("POST", collection(resources[kind]), manifest(kind, spec, name));
}

async function mergePatch(
  cp: ControlPlane,
  kind: Kind,
  name: string,
  patch: unknown,
  sub?: string,
): Promise<RawResponse> {
  const p = resourcePath(resources[kind], { namespace: NS, name, subresource: sub });
  return await cp.request("PATCH", p, patch, "application/merge-patch+json");
}

describe("compute.cloud.com/v1 CRDs on a real API server", () => {
  let cp: ControlPlane;

  before(async () => {
    cp = await startControlPlane();
    await cp.installCRDs();
    const ns = await cp.request("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS },
    });
    assert.equal(ns.status, 201, ns.text);
  });
  after(async () => {
    await cp?.stop();
  });

  it("serves every kind with its short name and categories", async () => {
    const res = await cp.request("GET", "/apis/compute.cloud.com/v1");
    assert.equal(res.status, 200, res.text);
    const list = (
      res.body as {
        resources: { name: string; kind: string; shortNames?: string[]; categories?: string[] }[];
      }
    ).resources;
    const byName = new Map(list.map((r) => [r.name, r]));
    for (const [plural, short] of [
      ["ec2instances", "ec2"],
      ["s3buckets", "s3b"],
      ["sqsqueues", "sqsq"],
    ] as const) {
      const r = byName.get(plural);
      assert.ok(r, `${plural} not served`);
      assert.deepEqual(r.shortNames, [short]);
      assert.deepEqual(r.categories, ["aws", "kubeprovisioner"]);
      assert.ok(byName.has(`${plural}/status`), `${plural}/status not served`);
    }
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
      { kind: "Ec2Instance", patch: { instanceType: "t3.large" }, expect: "instanceType is immutable" },
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
      {
        kind: "Ec2Instance",
        patch: { securityGroups: ["sg-89abcdef"] },
        expect: "securityGroups is immutable",
      },
      { kind: "Ec2Instance", patch: { userData: "#!/bin/sh\n" }, expect: "userData is immutable" },
      { kind: "Ec2Instance", patch: { associatePublicIP: false }, expect: "associatePublicIP is immutable" },
      {
        kind: "Ec2Instance",
        patch: { storage: { rootVolume: { size: 11 } } },
        expect: "storage is immutable",
      },
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

    it("accepts changes of the mutable fields", async () => {
      const accepted: [Kind, Record<string, unknown>][] = [
        [
          "Ec2Instance",
          {
            tags: { Name: "renamed" },
            deletionPolicy: "Retain",
            adoptExisting: true,
            onDeletedOutOfBand: "Report",
          },
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

  it("accepts every sample in config/samples", async () => {
    const dir = path.join(repoRoot, "config/samples");
    const files = readdirSync(dir).filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml");
    const kinds = new Set<string>();
    for (const f of files) {
      for (const doc of parseAllDocuments(readFileSync(path.join(dir, f), "utf8"))) {
        const obj = doc.toJS() as { kind: Kind; metadata: { name: string; namespace?: string } };
        kinds.add(obj.kind);
        const res = await cp.request("POST", collection(resources[obj.kind]), {
          ...obj,
          metadata: { ...obj.metadata, namespace: NS },
        });
        assert.equal(res.status, 201, `${f}: ${res.text}`);
      }
    }
    assert.deepEqual([...kinds].sort(), ["Ec2Instance", "S3Bucket", "SqsQueue"]);
    const kustomization = readFileSync(path.join(dir, "kustomization.yaml"), "utf8");
    for (const f of files) assert.ok(kustomization.includes(f), `kustomization.yaml does not list ${f}`);
  });

  it("teaches the API through kubectl explain", async () => {
    // The OpenAPI document is published a moment after the CRD is established.
    await waitFor(
      "OpenAPI v3 for compute.cloud.com/v1",
      async () => {
        const res = await cp.request("GET", "/openapi/v3/apis/compute.cloud.com/v1");
        return res.status === 200 && res.text.includes("com.cloud.compute.v1.Ec2Instance");
      },
      30_000,
    );
    const { stdout } = await cp.kubectl(["explain", "ec2instance.spec.storage"]);
    assert.match(stdout, /KIND:\s+Ec2Instance/);
    assert.match(stdout, /EBS volumes of the instance\. Immutable/);
    assert.match(stdout, /additionalVolumes\s+<\[\]Object>/);
    assert.match(stdout, /rootVolume\s+<Object>/);
    const root = await cp.kubectl(["explain", "s3bucket.spec.forceDelete"]);
    assert.match(root.stdout, /Delete every object/);
  });

  it("returns the printer columns and cells in a Table response", async () => {
    const created = await create(cp, "Ec2Instance", valid.Ec2Instance, "table-ec2");
    assert.equal(created.status, 201, created.text);
    const status = await mergePatch(
      cp,
      "Ec2Instance",
      "table-ec2",
      {
        status: {
          instanceId: "i-0123456789abcdef0",
          state: "running",
          publicIP: "203.0.113.7",
          conditions: [
            {
              type: "Ready",
              status: "True",
              reason: "Available",
              message: "running",
              lastTransitionTime: "2025-01-01T00:00:00Z",
            },
          ],
        },
      },
      "status",
    );
    assert.equal(status.status, 200, status.text);

    const res = await rawRequest(
      cp,
      resourcePath(Ec2InstanceResource, { namespace: NS, name: "table-ec2" }),
      {
        Accept: "application/json;as=Table;g=meta.k8s.io;v=v1",
      },
    );
    assert.equal(res.status, 200);
    const table = res.body as {
      kind: string;
      columnDefinitions: { name: string; priority: number }[];
      rows: { cells: unknown[] }[];
    };
    assert.equal(table.kind, "Table");
    const names = table.columnDefinitions.map((c) => c.name);
    assert.deepEqual(names.slice(0, 7), [
      "Name",
      "InstanceType",
      "State",
      "PublicIP",
      "InstanceID",
      "Ready",
      "Age",
    ]);
    const cells = table.rows[0]?.cells ?? [];
    assert.deepEqual(cells.slice(0, 6), [
      "table-ec2",
      "t3.micro",
      "running",
      "203.0.113.7",
      "i-0123456789abcdef0",
      "True",
    ]);

    for (const [r, expected] of [
      [S3BucketResource, ["Name", "BucketName", "State", "Endpoint", "Ready", "Age"]],
      [SqsQueueResource, ["Name", "QueueName", "State", "QueueURL", "Ready", "Age"]],
    ] as const) {
      const list = await rawRequest(cp, collection(r), {
        Accept: "application/json;as=Table;g=meta.k8s.io;v=v1",
      });
      const t = list.body as { columnDefinitions: { name: string; priority: number }[] };
      assert.deepEqual(
        t.columnDefinitions.filter((c) => c.priority === 0).map((c) => c.name),
        expected,
      );
    }
  });

  it("lists by short name, by category and by region field selector", async () => {
    const byShort = await cp.kubectl(["get", "ec2,s3b,sqsq", "-n", NS, "-o", "name"]);
    assert.match(byShort.stdout, /ec2instance\.compute\.cloud\.com\/table-ec2/);
    assert.match(byShort.stdout, /s3bucket\.compute\.cloud\.com\//);
    assert.match(byShort.stdout, /sqsqueue\.compute\.cloud\.com\//);
    const byCategory = await cp.kubectl(["get", "aws", "-n", NS, "-o", "name"]);
    assert.deepEqual(byCategory.stdout, byShort.stdout);
    const inEu = await cp.request(
      "GET",
      `${collection(S3BucketResource)}?fieldSelector=spec.region%3Deu-west-1`,
    );
    assert.equal(inEu.status, 200, inEu.text);
    const items = (inEu.body as { items: { spec: { region: string } }[] }).items;
    assert.ok(items.length > 0);
    assert.ok(items.every((i) => i.spec.region === "eu-west-1"));
  });
});
