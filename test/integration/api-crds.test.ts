/**
 * The generated CRDs on a real kube-apiserver: they install and are served with their short
 * names and categories, the emulator's samples (config/samples) are accepted, `kubectl explain`
 * teaches the API, Table requests carry the printer columns, and field selectors work. The
 * samples for real AWS have a file of their own (samples-aws.test.ts).
 */
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { Ec2InstanceResource, S3BucketResource, SqsQueueResource } from "../../src/api/v1/index.ts";
import { resourcePath } from "../../src/runtime/kube/object.ts";
import type { ControlPlane } from "../support/envtest.ts";
import { repoRoot, waitFor, WAIT_MS } from "../support/process.ts";
import {
  collection,
  create,
  mergePatch,
  NS,
  rawRequest,
  resources,
  startApiControlPlane,
  valid,
  type Kind,
} from "./api-fixtures.ts";

describe("compute.cloud.com/v1 CRDs on a real API server", () => {
  let cp: ControlPlane;

  before(async () => {
    cp = await startApiControlPlane();
    for (const kind of Object.keys(resources) as Kind[]) {
      const res = await create(cp, kind, valid[kind]);
      assert.equal(res.status, 201, res.text);
    }
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
      WAIT_MS,
    );
    const { stdout } = await cp.kubectl(["explain", "ec2instance.spec.storage"]);
    assert.match(stdout, /KIND:\s+Ec2Instance/);
    assert.match(stdout, /EBS volumes of the instance\. Immutable/);
    assert.match(stdout, /additionalVolumes\s+<\[\]Object>/);
    assert.match(stdout, /rootVolume\s+<Object>/);
    const desired = await cp.kubectl(["explain", "ec2instance.spec.desiredState"]);
    assert.match(desired.stdout, /Whether the instance should run: running \(default\) or stopped/);
    assert.match(desired.stdout, /ENUM:\s+running\s+stopped/);
    const root = await cp.kubectl(["explain", "s3bucket.spec.forceDelete"]);
    assert.match(root.stdout, /Delete every object/);
    const outputs = await cp.kubectl(["explain", "sqsqueue.spec.writeOutputsTo"]);
    assert.match(outputs.stdout, /pods to read with envFrom: QUEUE_NAME/);
    assert.match(outputs.stdout, /reason OutputConflict/);
    // Either name, or both: neither is required on its own (a CEL rule asks for one of them).
    assert.match(outputs.stdout, /configMapName\t<string>\n/);
    assert.match(outputs.stdout, /secretName\t<string>\n/);
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
