/**
 * The test runner's shared back ends (test/support/global-setup.ts, shared-backends.ts,
 * backends-reset.ts) on real processes: a reset puts a control plane back as its baseline had it,
 * whatever a file left behind, and a lease lends one file at a time a control plane and an
 * emulator that show nothing of the file before.
 */
import assert from "node:assert/strict";
import { CreateBucketCommand, ListBucketsCommand, S3Client } from "@aws-sdk/client-s3";
import { after, before, describe, it } from "node:test";
import { resetToBaseline, takeBaseline, type Baseline } from "../support/backends-reset.ts";
import { launchControlPlane, type ControlPlane } from "../support/envtest.ts";
import { globalSetup, globalTeardown } from "../support/global-setup.ts";
import { leaseBackends } from "../support/shared-backends.ts";
import { installTestCrd } from "../support/test-crd.ts";

const ns = (name: string, extra: Record<string, unknown> = {}): unknown => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name, ...extra },
});

describe("resetting a control plane to its baseline", () => {
  let cp: ControlPlane;
  let baseline: Baseline;

  before(async () => {
    cp = await launchControlPlane({ installCRDs: true, private: true });
    baseline = await takeBaseline(cp);
  });
  after(() => cp?.stop());

  it("removes namespaces and objects a file left, finalizers and all, and a CRD it created", async () => {
    assert.equal((await cp.request("POST", "/api/v1/namespaces", ns("left"))).status, 201);
    const cm = await cp.request("POST", "/api/v1/namespaces/left/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "held", finalizers: ["example.com/hold"] },
    });
    assert.equal(cm.status, 201, cm.text);
    const bucket = await cp.request("POST", "/apis/compute.cloud.com/v1/namespaces/left/s3buckets", {
      apiVersion: "compute.cloud.com/v1",
      kind: "S3Bucket",
      metadata: { name: "b", finalizers: ["compute.cloud.com/finalizer"] },
      spec: { region: "us-east-1", bucketName: "left-behind" },
    });
    assert.equal(bucket.status, 201, bucket.text);
    // Deleting a namespace without a namespace controller leaves it Terminating for good.
    assert.equal((await cp.request("DELETE", "/api/v1/namespaces/left")).status, 200);
    await installTestCrd(cp, {
      group: "reset.example.com",
      version: "v1",
      kind: "Widget",
      plural: "widgets",
      namespaced: true,
    });

    const { deleted, restored } = await resetToBaseline(cp, baseline);
    assert.ok(deleted >= 4, `keys deleted: ${deleted}`);
    assert.equal(restored, 0);
    assert.equal((await cp.request("GET", "/api/v1/namespaces/left")).status, 404);
    assert.equal(
      (
        await cp.request(
          "GET",
          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.reset.example.com",
        )
      ).status,
      404,
    );
    const buckets = await cp.request("GET", "/apis/compute.cloud.com/v1/s3buckets");
    assert.deepEqual((buckets.body as { items: unknown[] }).items, []);
    // The same names are free again, as on a new control plane.
    assert.equal((await cp.request("POST", "/api/v1/namespaces", ns("left"))).status, 201);
    await resetToBaseline(cp, baseline);
  });

  it("writes back what a file changed or deleted of the baseline, and then finds nothing to do", async () => {
    const labelled = await cp.request(
      "PATCH",
      "/api/v1/namespaces/default",
      { metadata: { labels: { touched: "yes" } } },
      "application/merge-patch+json",
    );
    assert.equal(labelled.status, 200, labelled.text);
    assert.equal(
      (await cp.request("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/view")).status,
      200,
    );

    const { restored } = await resetToBaseline(cp, baseline);
    assert.equal(restored, 2);
    const def = await cp.request("GET", "/api/v1/namespaces/default");
    assert.equal(
      (def.body as { metadata: { labels?: Record<string, string> } }).metadata.labels?.touched,
      undefined,
    );
    assert.equal(
      (await cp.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/view")).status,
      200,
    );
    assert.deepEqual(await resetToBaseline(cp, baseline), { deleted: 0, restored: 0 });
  });
});

describe("leases of the shared back ends", () => {
  const saved = process.env.KUBEPROVISIONER_TEST_BACKENDS;
  before(() => globalSetup());
  after(async () => {
    await globalTeardown();
    if (saved === undefined) delete process.env.KUBEPROVISIONER_TEST_BACKENDS;
    else process.env.KUBEPROVISIONER_TEST_BACKENDS = saved;
  });

  it("lends the next file the same back ends, showing nothing the file before left", async () => {
    const first = await leaseBackends({ moto: true });
    assert.ok(first.moto !== undefined);
    assert.equal((await first.cp.request("POST", "/api/v1/namespaces", ns("file-one"))).status, 201);
    const s3 = new S3Client({
      region: "us-east-1",
      endpoint: first.moto.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
    });
    await s3.send(new CreateBucketCommand({ Bucket: "file-one-bucket" }));
    const { server, endpoint } = { server: first.cp.server, endpoint: first.moto.endpoint };
    await first.cp.stop();

    const second = await leaseBackends({ moto: true });
    try {
      assert.equal(second.cp.server, server, "the control plane is reused");
      assert.equal(second.moto?.endpoint, endpoint, "the emulator is reused");
      assert.equal((await second.cp.request("GET", "/api/v1/namespaces/file-one")).status, 404);
      assert.deepEqual((await s3.send(new ListBucketsCommand({}))).Buckets ?? [], []);
      assert.equal((await second.cp.request("POST", "/api/v1/namespaces", ns("file-one"))).status, 201);
    } finally {
      s3.destroy();
      await second.cp.stop();
    }
  });

  it("lends a bare control plane, without the project's CRDs, to a file that asks for one, and takes back what it installed", async () => {
    const crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/s3buckets.compute.cloud.com";
    const first = await leaseBackends({ moto: false, kind: "bare" });
    const server = first.cp.server;
    try {
      assert.equal(
        (await first.cp.request("GET", crd)).status,
        404,
        "a bare control plane has no CRD of the project",
      );
      await installTestCrd(first.cp, {
        group: "bare.example.com",
        version: "v1",
        kind: "Gadget",
        plural: "gadgets",
        namespaced: true,
      });
    } finally {
      await first.cp.stop();
    }
    const withCrds = await leaseBackends({ moto: false });
    const second = await leaseBackends({ moto: false, kind: "bare" });
    try {
      assert.notEqual(withCrds.cp.server, server, "a lease of the project's CRDs gets another control plane");
      assert.equal((await withCrds.cp.request("GET", crd)).status, 200);
      assert.equal(second.cp.server, server, "the bare control plane is reused");
      const gadgets = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.bare.example.com";
      assert.equal(
        (await second.cp.request("GET", gadgets)).status,
        404,
        "the CRD the file before installed is gone",
      );
    } finally {
      await Promise.all([withCrds.cp.stop(), second.cp.stop()]);
    }
  });

  it("gives a bare control plane the project's CRDs when a file asks for them and no other is free", async () => {
    const crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/s3buckets.compute.cloud.com";
    const bare = await leaseBackends({ moto: false, kind: "bare" });
    const server = bare.cp.server;
    await bare.cp.stop();
    // Every control plane with the CRDs is taken before the bare one is given them.
    const held: { cp: ControlPlane }[] = [];
    try {
      for (let i = 0; i < 5 && !held.some((l) => l.cp.server === server); i++)
        held.push(await leaseBackends({ moto: false }));
      const converted = held.find((l) => l.cp.server === server);
      assert.ok(converted !== undefined, "the bare control plane serves a lease of the CRDs");
      assert.equal(held.indexOf(converted), held.length - 1, "only once no other was free");
      assert.equal((await converted.cp.request("GET", crd)).status, 200);
      const next = await leaseBackends({ moto: false, kind: "bare" });
      held.push(next);
      assert.notEqual(next.cp.server, server, "it is no longer bare");
      assert.equal((await next.cp.request("GET", crd)).status, 404);
    } finally {
      await Promise.all(held.map((l) => l.cp.stop()));
    }
  });

  it("lends files that run at once back ends of their own, and refuses to restart a shared API server", async () => {
    const [a, b] = await Promise.all([leaseBackends({ moto: false }), leaseBackends({ moto: false })]);
    try {
      assert.notEqual(a.cp.server, b.cp.server);
      await assert.rejects(a.cp.stopApiServer(), /shared by the test runner/);
      assert.equal((await a.cp.request("GET", "/readyz")).status, 200);
    } finally {
      await Promise.all([a.cp.stop(), b.cp.stop()]);
    }
  });
});
