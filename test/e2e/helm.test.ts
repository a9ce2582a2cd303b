/**
 * End to end on real components: `helm install` of the chart into a real kube-apiserver, then the
 * operator (from source, with the Deployment's own flags and environment) authenticated only by a
 * TokenRequest token of the chart's ServiceAccount, reconciling the samples against moto.
 *
 * RBAC is judged from the API server's audit log of that run (see rbac-audit.ts): no request of
 * the ServiceAccount may be refused (the chart grants enough), and every permission the chart
 * grants must appear in the log (the chart grants nothing the operator does not use). The flow
 * therefore covers each code path that needs a permission: informers (list, watch), finalizer
 * add and release (patch), status writes, a repeated Warning Event (create, then patch), the
 * Lease (get, create, update, release on SIGTERM), the outputs ConfigMap of a sample (the
 * informer's list and watch, create, an update repairing an edit, the get after a create met a
 * foreign ConfigMap, delete when writeOutputsTo is removed), the same for its outputs Secret in
 * the one namespace `outputs.secretNamespaces` grants (a Role there, nothing on Secrets
 * cluster-wide), and authenticated /metrics scrapes
 * (TokenReview, SubjectAccessReview).
 *
 * Beside the operator's own RBAC: the chart's view and edit ClusterRoles, aggregated into the
 * built-in view, edit and admin roles by kube-controller-manager's aggregation controller, decide
 * what tenants holding those roles may do; and every metric the chart's Grafana dashboard queries
 * is found in a scrape of the running operator.
 */
import { DescribeInstancesCommand } from "@aws-sdk/client-ec2";
import { DeleteObjectCommand, HeadBucketCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startBackends } from "../support/backends.ts";
import type { ControlPlane } from "../support/envtest.ts";
import type { Moto } from "../support/moto.ts";
import { metricSum } from "../../src/runtime/testing/prometheus-text.ts";
import { waitFor, within, WAIT_MS } from "../support/process.ts";
import { startConflictInjector, type ConflictInjector } from "./conflict-webhook.ts";
import { motoClients, sampleOf, sampleRefs, samples, scrape, withOperatorLog } from "./flow-support.ts";
import { CHART_DIR, helm, type Manifest } from "./helm.ts";
import { dashboardQueries, metricNames } from "./dashboard.ts";
import { startLocalPod, type LocalPod } from "./local-pod.ts";
import {
  auditPolicy,
  grantsOf,
  readAuditLog,
  refusedRequests,
  ungrantedUses,
  unusedGrants,
  usedPermissions,
} from "./rbac-audit.ts";
import { CRDS, KINDS } from "./chart-expect.ts";

const NS = "kp-system";
const RELEASE = "kp";
const FULL = "kp-kubeprovisioner";
const SA_USER = `system:serviceaccount:${NS}:${FULL}`;
const APPS = "e2e";
const LEASE = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/c56fc483.cloud.com`;
const TIMEOUT = "120s";

describe("helm install on a real API server, then the operator under the chart's ServiceAccount", () => {
  const work = mkdtempSync(path.join(os.tmpdir(), "kp-e2e-"));
  const auditLog = path.join(work, "audit.log");
  let cp: ControlPlane;
  let moto: Moto;
  let pod: LocalPod | undefined;
  let injector: ConflictInjector | undefined;

  before(async () => {
    const policy = path.join(work, "audit-policy.json");
    writeFileSync(policy, auditPolicy([SA_USER]));
    ({ cp, moto } = await startBackends({
      controllers: ["clusterrole-aggregation"],
      apiServerFlags: [
        `--audit-policy-file=${policy}`,
        `--audit-log-path=${auditLog}`,
        "--audit-log-mode=blocking",
      ],
    }));
  });
  after(async () => {
    await pod?.process.stop();
    await injector?.stop();
    await Promise.allSettled([cp?.stop(), moto?.stop()]);
    if (process.env.KP_E2E_KEEP) process.stderr.write(`operator log and audit log kept in ${work}\n`);
    else rmSync(work, { recursive: true, force: true });
  });

  const withLog = withOperatorLog(() => pod?.process.logFile);
  const kubectl = (args: string[], input?: string): Promise<string> =>
    withLog(cp.kubectl(args, input === undefined ? {} : { input }).then((r) => r.stdout));

  it("helm install creates the CRDs, the RBAC and the Deployment", async () => {
    await kubectl(["create", "namespace", NS]);
    // The samples' namespace exists first: the chart puts the outputs-Secret Role in it.
    await kubectl(["create", "namespace", APPS]);
    await kubectl([
      "-n",
      NS,
      "create",
      "secret",
      "generic",
      "aws-credentials",
      `--from-literal=AWS_ACCESS_KEY_ID=${moto.env.AWS_ACCESS_KEY_ID}`,
      `--from-literal=AWS_SECRET_ACCESS_KEY=${moto.env.AWS_SECRET_ACCESS_KEY}`,
    ]);
    const res = await helm([
      "install",
      RELEASE,
      CHART_DIR,
      "--kubeconfig",
      cp.kubeconfigPath,
      "--namespace",
      NS,
      "--set",
      "aws.existingSecret=aws-credentials",
      "--set",
      "aws.region=us-east-1",
      "--set",
      `aws.endpoint=${moto.endpoint}`,
      "--set",
      "metrics.dashboard.enabled=true",
      "--set",
      `outputs.secretNamespaces={${APPS}}`,
    ]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /STATUS: deployed/);
    assert.match(res.stdout, /kubectl get ec2,s3b,sqsq -w/, "NOTES show how to watch the resources");
    assert.match(
      res.stdout,
      /Never grant\s+tenants write on ec2instances\/status/,
      "NOTES warn about status",
    );

    for (const crd of KINDS) {
      await waitFor(
        `CRD ${crd} established`,
        async () => {
          const got = await cp.request(
            "GET",
            `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}.compute.cloud.com`,
          );
          const conds =
            (got.body as { status?: { conditions?: { type: string; status: string }[] } }).status
              ?.conditions ?? [];
          return conds.some((c) => c.type === "Established" && c.status === "True");
        },
        WAIT_MS,
      );
    }
    for (const p of [
      `/apis/rbac.authorization.k8s.io/v1/clusterroles/${FULL}-manager`,
      `/apis/rbac.authorization.k8s.io/v1/clusterroles/${FULL}-metrics-reader`,
      `/apis/rbac.authorization.k8s.io/v1/clusterroles/${FULL}-view`,
      `/apis/rbac.authorization.k8s.io/v1/clusterroles/${FULL}-edit`,
      `/api/v1/namespaces/${NS}/configmaps/${FULL}-dashboard`,
      `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${FULL}-manager`,
      `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/${FULL}-leader-election`,
      `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings/${FULL}-leader-election`,
      `/api/v1/namespaces/${NS}/serviceaccounts/${FULL}`,
      `/api/v1/namespaces/${NS}/services/${FULL}-metrics`,
      `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/${FULL}`,
    ]) {
      const got = await cp.request("GET", p);
      assert.equal(got.status, 200, `${p}: ${got.text}`);
    }
    const dep = await cp.request("GET", `/apis/apps/v1/namespaces/${NS}/deployments/${FULL}`);
    assert.equal(dep.status, 200, dep.text);
    assert.equal((dep.body as { spec: { replicas: number } }).spec.replicas, 2);
  });

  it("tenants holding the built-in edit or admin role manage the kinds, view only reads, and nobody writes status", async () => {
    const TENANT = "tenant";
    await kubectl(["create", "namespace", TENANT]);
    for (const [user, role] of [
      ["alice", "edit"],
      ["bob", "view"],
      ["carol", "admin"],
    ] as const) {
      await kubectl([
        "create",
        "rolebinding",
        `${user}-${role}`,
        `--clusterrole=${role}`,
        `--user=${user}`,
        "-n",
        TENANT,
      ]);
    }
    // kube-controller-manager copies the chart roles' rules into the built-in ones.
    for (const [role, verb] of [
      ["view", "watch"],
      ["edit", "create"],
      ["admin", "deletecollection"],
    ] as const) {
      await waitFor(
        `the built-in ${role} ClusterRole holds the chart's rules`,
        async () => {
          const got = await cp.request("GET", `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role}`);
          const rules = (got.body as { rules?: { resources?: string[]; verbs?: string[] }[] }).rules ?? [];
          return KINDS.every((k) => rules.some((r) => r.resources?.includes(k) && r.verbs?.includes(verb)));
        },
        WAIT_MS,
        200,
      );
    }
    /** kubectl as `user` (admin impersonation; the API server authorizes the impersonated user). */
    const as = async (
      user: string,
      args: string[],
      input?: string,
    ): Promise<{ ok: boolean; out: string }> => {
      try {
        const r = await cp.kubectl(
          [`--as=${user}`, "-n", TENANT, ...args],
          input === undefined ? {} : { input },
        );
        return { ok: true, out: r.stdout };
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string };
        return { ok: false, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
      }
    };
    const bucket = JSON.stringify({
      apiVersion: "compute.cloud.com/v1",
      kind: "S3Bucket",
      metadata: { name: "tenant-bucket" },
      spec: { bucketName: "kp-e2e-tenant-bucket", region: "us-east-1" },
    });
    const created = await as("alice", ["create", "-f", "-"], bucket);
    assert.ok(created.ok, created.out);
    const statusPatch = ["patch", "s3bucket/tenant-bucket", "--subresource=status", "--type=merge", "-p"];
    const forged = JSON.stringify({ status: { bucketArn: "arn:aws:s3:::someone-elses" } });
    for (const user of ["alice", "bob", "carol"]) {
      const read = await as(user, ["get", "s3bucket/tenant-bucket", "-o", "name"]);
      assert.ok(read.ok, `${user} reads: ${read.out}`);
      const status = await as(user, [...statusPatch, forged]);
      assert.equal(status.ok, false, `${user} may not write status`);
      assert.match(status.out, /forbidden/i);
    }
    const viewerWrites = await as("bob", ["label", "s3bucket/tenant-bucket", "team=b"]);
    assert.equal(viewerWrites.ok, false, "view cannot change an object");
    assert.match(viewerWrites.out, /forbidden/i);
    const viewerCreates = await as(
      "bob",
      ["create", "-f", "-"],
      bucket.replace("tenant-bucket", "bobs-bucket"),
    );
    assert.equal(viewerCreates.ok, false, "view cannot create");
    assert.match(viewerCreates.out, /forbidden/i);
    const editorChanges = await as("alice", ["label", "s3bucket/tenant-bucket", "team=a"]);
    assert.ok(editorChanges.ok, editorChanges.out);

    // The same verdicts for every kind and for the admin role, from the API server's authorizer.
    const canI = async (user: string, verb: string, resource: string, subresource = ""): Promise<boolean> => {
      const review = await cp.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
          user,
          resourceAttributes: { namespace: TENANT, verb, group: "compute.cloud.com", resource, subresource },
        },
      });
      assert.equal(review.status, 201, review.text);
      return (review.body as { status?: { allowed?: boolean } }).status?.allowed === true;
    };
    for (const kind of KINDS) {
      for (const verb of ["create", "update", "patch", "delete"]) {
        assert.equal(await canI("alice", verb, kind), true, `edit: ${verb} ${kind}`);
        assert.equal(await canI("carol", verb, kind), true, `admin: ${verb} ${kind}`);
        assert.equal(await canI("bob", verb, kind), false, `view: ${verb} ${kind}`);
      }
      for (const verb of ["get", "list", "watch"]) {
        assert.equal(await canI("bob", verb, kind), true, `view: ${verb} ${kind}`);
      }
      for (const user of ["alice", "bob", "carol"]) {
        for (const verb of ["update", "patch"]) {
          assert.equal(await canI(user, verb, kind, "status"), false, `${user}: ${verb} ${kind}/status`);
        }
      }
    }
    const deleted = await as("alice", ["delete", "s3bucket/tenant-bucket", "--wait=true"]);
    assert.ok(deleted.ok, deleted.out);
  });

  it("the pod template is admitted by the restricted Pod Security Standard, which refuses a weakened copy", async () => {
    await kubectl(["create", "namespace", "restricted"]);
    await kubectl(["label", "namespace", "restricted", "pod-security.kubernetes.io/enforce=restricted"]);
    const dep = await cp.request("GET", `/apis/apps/v1/namespaces/${NS}/deployments/${FULL}`);
    const template = (
      dep.body as {
        spec: { template: { spec: { containers: { securityContext: Record<string, unknown> }[] } } };
      }
    ).spec.template;
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "chart-pod" }, spec: template.spec };
    const ok = await cp.request("POST", "/api/v1/namespaces/restricted/pods?dryRun=All", pod);
    assert.equal(ok.status, 201, ok.text);

    const weakened = structuredClone(pod);
    const c = weakened.spec.containers[0];
    assert.ok(c);
    c.securityContext = { ...c.securityContext, allowPrivilegeEscalation: true };
    const refused = await cp.request("POST", "/api/v1/namespaces/restricted/pods?dryRun=All", weakened);
    assert.equal(refused.status, 403, refused.text);
    assert.match(
      (refused.body as { message?: string }).message ?? "",
      /violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false/,
    );
  });

  it("the operator starts with the chart's flags and a ServiceAccount token, and takes the Lease", async () => {
    injector = await startConflictInjector(cp, {
      username: SA_USER,
      group: "compute.cloud.com",
      plurals: [...CRDS],
    });
    const kc = await cp.tokenKubeConfig(NS, FULL);
    const kubeconfigPath = cp.writeKubeConfig(kc, "chart-serviceaccount");
    pod = await startLocalPod(cp, {
      namespace: NS,
      deployment: FULL,
      kubeconfigPath,
      logFile: path.join(work, "operator.log"),
      extraEnv: { AWS_EC2_METADATA_DISABLED: "true" },
    });
    assert.equal(pod.podEnv.AWS_ACCESS_KEY_ID, moto.env.AWS_ACCESS_KEY_ID, "keys come from the Secret");
    assert.equal(pod.podEnv.AWS_ENDPOINT_URL, moto.endpoint);
    const proc = pod.process;
    const probe = pod.probeUrl;
    await withLog(
      waitFor(
        "operator /readyz",
        async () => {
          if (proc.proc.exitCode !== null)
            throw new Error(`operator exited ${proc.proc.exitCode}; see ${proc.logFile}`);
          return (await fetch(`${probe}/readyz`)).status === 200;
        },
        60_000,
        200,
      ),
    );
    await withLog(
      waitFor(
        "Lease held",
        async () => {
          const lease = await cp.request("GET", LEASE);
          return (
            lease.status === 200 &&
            ((lease.body as { spec?: { holderIdentity?: string } }).spec?.holderIdentity ?? "") !== ""
          );
        },
        WAIT_MS,
        200,
      ),
    );
  });

  it("the three samples become Ready, backed by resources in AWS", async () => {
    for (const s of samples()) {
      const profile = s.spec.iamInstanceProfile;
      if (typeof profile === "string") await moto.createInstanceProfile(profile);
    }
    for (const s of samples()) await kubectl(["apply", "-n", APPS, "-f", s.file]);
    await kubectl(["wait", "-n", APPS, "--for=condition=Ready", `--timeout=${TIMEOUT}`, ...sampleRefs()]);
    const table = await kubectl(["get", "-n", APPS, "ec2,s3b,sqsq"]);
    for (const s of samples()) assert.match(table, new RegExp(s.metadata.name), table);

    const aws = motoClients(moto);
    try {
      await aws.s3.send(new HeadBucketCommand({ Bucket: String(sampleOf("S3Bucket").spec.bucketName) }));
      await aws.sqs.send(new GetQueueUrlCommand({ QueueName: String(sampleOf("SqsQueue").spec.queueName) }));
      const found = await aws.ec2.send(
        new DescribeInstancesCommand({
          Filters: [
            { Name: "tag:compute.cloud.com/name", Values: [sampleOf("Ec2Instance").metadata.name] },
            { Name: "instance-state-name", Values: ["pending", "running"] },
          ],
        }),
      );
      assert.equal(found.Reservations?.flatMap((r) => r.Instances ?? []).length, 1, "exactly one instance");
    } finally {
      aws.destroy();
    }
  });

  it("the jobs sample's outputs ConfigMap and Secret are written, repaired, never written over foreign ones, and deleted with writeOutputsTo", async () => {
    const cms = `/api/v1/namespaces/${APPS}/configmaps`;
    const secrets = `/api/v1/namespaces/${APPS}/secrets`;
    type Cm = { metadata: { ownerReferences?: { name: string }[] }; data?: Record<string, string> };
    const configMap = async (name: string): Promise<Cm | undefined> => {
      const res = await cp.request("GET", `${cms}/${name}`);
      return res.status === 404 ? undefined : (res.body as Cm);
    };
    const secret = async (name: string): Promise<Cm | undefined> => {
      const res = await cp.request("GET", `${secrets}/${name}`);
      return res.status === 404 ? undefined : (res.body as Cm);
    };
    const jobs = sampleOf("SqsQueue", "jobs");
    const cmName = String((jobs.spec.writeOutputsTo as { configMapName: string }).configMapName);
    const secretName = `${cmName}-secret`;
    // The Secret beside the sample's ConfigMap (the Secret informer's list and watch, create).
    await kubectl([
      "patch",
      "-n",
      APPS,
      "sqsqueue/jobs",
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { writeOutputsTo: { secretName } } }),
    ]);
    let written: Cm | undefined;
    // Written once the queue exists (create; the informer's list and watch).
    await withLog(
      waitFor(
        "the jobs outputs ConfigMap",
        async () => (written = await configMap(cmName))?.data?.QUEUE_URL !== undefined,
        60_000,
        200,
      ),
    );
    assert.equal(written?.data?.QUEUE_NAME, jobs.spec.queueName);
    assert.equal(written?.metadata.ownerReferences?.[0]?.name, "jobs");
    let writtenSecret: Cm | undefined;
    await withLog(
      waitFor(
        "the jobs outputs Secret",
        async () => (writtenSecret = await secret(secretName))?.data?.QUEUE_URL !== undefined,
        60_000,
        200,
      ),
    );
    assert.equal(
      Buffer.from(writtenSecret?.data?.QUEUE_URL ?? "", "base64").toString(),
      written?.data?.QUEUE_URL,
      "the Secret holds the ConfigMap's values",
    );
    // Edited by someone else: put back (update).
    const secretEdit = await cp.request(
      "PATCH",
      `${secrets}/${secretName}`,
      { stringData: { QUEUE_URL: "x" } },
      "application/merge-patch+json",
    );
    assert.equal(secretEdit.status, 200, secretEdit.text);
    await withLog(
      waitFor(
        "the outputs Secret repaired",
        async () => (await secret(secretName))?.data?.QUEUE_URL === writtenSecret?.data?.QUEUE_URL,
        60_000,
        200,
      ),
    );
    // Edited by someone else: put back (update).
    const edit = await cp.request(
      "PATCH",
      `${cms}/${cmName}`,
      { data: { QUEUE_URL: "x" } },
      "application/merge-patch+json",
    );
    assert.equal(edit.status, 200, edit.text);
    await withLog(
      waitFor(
        "the outputs repaired",
        async () => (await configMap(cmName))?.data?.QUEUE_URL === written?.data?.QUEUE_URL,
        60_000,
        200,
      ),
    );
    // A ConfigMap nobody labelled: the create meets 409 and a get finds it foreign.
    const foreign = await cp.request("POST", cms, {
      metadata: { name: "not-the-operators" },
      data: { a: "b" },
    });
    assert.equal(foreign.status, 201, foreign.text);
    const foreignSecret = await cp.request("POST", secrets, {
      metadata: { name: "not-the-operators" },
      stringData: { a: "b" },
    });
    assert.equal(foreignSecret.status, 201, foreignSecret.text);
    await kubectl(
      ["apply", "-n", APPS, "-f", "-"],
      JSON.stringify({
        apiVersion: "compute.cloud.com/v1",
        kind: "SqsQueue",
        metadata: { name: "conflicted" },
        spec: {
          queueName: "kp-e2e-conflicted",
          region: "us-east-1",
          writeOutputsTo: { configMapName: "not-the-operators", secretName: "not-the-operators" },
        },
      }),
    );
    await kubectl([
      "wait",
      "-n",
      APPS,
      '--for=jsonpath={.status.conditions[?(@.type=="Ready")].reason}=OutputConflict',
      `--timeout=${TIMEOUT}`,
      "sqsqueue/conflicted",
    ]);
    assert.deepEqual(
      (await configMap("not-the-operators"))?.data,
      { a: "b" },
      "the foreign ConfigMap is untouched",
    );
    // The same reconcile met 409 on the Secret's create and a get found it foreign.
    assert.deepEqual(
      (await secret("not-the-operators"))?.data,
      { a: Buffer.from("b").toString("base64") },
      "the foreign Secret is untouched",
    );
    await kubectl(["delete", "-n", APPS, "sqsqueue/conflicted", `--timeout=${TIMEOUT}`]);
    // writeOutputsTo removed: the ConfigMap goes (delete).
    await kubectl([
      "patch",
      "-n",
      APPS,
      "sqsqueue/jobs",
      "--type=merge",
      "-p",
      '{"spec":{"writeOutputsTo":null}}',
    ]);
    await withLog(
      waitFor(
        "the outputs ConfigMap and Secret deleted",
        async () => (await configMap(cmName)) === undefined && (await secret(secretName)) === undefined,
        60_000,
        200,
      ),
    );
  });

  it("a non-empty bucket blocks its deletion with one aggregated Warning Event, then goes once emptied", async () => {
    const bucket = "kp-e2e-not-empty";
    await kubectl(
      ["apply", "-n", APPS, "-f", "-"],
      JSON.stringify({
        apiVersion: "compute.cloud.com/v1",
        kind: "S3Bucket",
        metadata: { name: "not-empty" },
        spec: { bucketName: bucket, region: "us-east-1", deletionPolicy: "Delete" },
      }),
    );
    await kubectl([
      "wait",
      "-n",
      APPS,
      "--for=condition=Ready",
      `--timeout=${TIMEOUT}`,
      "s3bucket/not-empty",
    ]);
    const aws = motoClients(moto);
    const s3 = aws.s3;
    try {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: "keep-me.txt", Body: "data" }));
      await kubectl(["delete", "-n", APPS, "s3bucket/not-empty", "--wait=false"]);
      await withLog(
        waitFor(
          "a BucketNotEmpty Event repeated (count >= 2)",
          async () => {
            const list = await cp.request(
              "GET",
              `/api/v1/namespaces/${APPS}/events?fieldSelector=involvedObject.name=not-empty,reason=BucketNotEmpty`,
            );
            const items = (list.body as { items?: { type: string; count?: number }[] }).items ?? [];
            return items.length === 1 && items[0]?.type === "Warning" && (items[0]?.count ?? 0) >= 2;
          },
          60_000,
          200,
        ),
      );
      await kubectl([
        "wait",
        "-n",
        APPS,
        "--for=condition=Ready=false",
        `--timeout=${TIMEOUT}`,
        "s3bucket/not-empty",
      ]);
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: "keep-me.txt" }));
      await kubectl(["wait", "-n", APPS, "--for=delete", `--timeout=${TIMEOUT}`, "s3bucket/not-empty"]);
    } finally {
      aws.destroy();
    }
  });

  it("an AwsAccount assumes its role under the chart's RBAC, and goes once unused", async () => {
    const account = {
      apiVersion: "compute.cloud.com/v1",
      kind: "AwsAccount",
      metadata: { name: "e2e-tenant" },
      spec: { roleArn: "arn:aws:iam::222222222222:role/tenant", allowedNamespaces: { names: [APPS] } },
    };
    const res = await cp.request("POST", "/apis/compute.cloud.com/v1/awsaccounts", account);
    assert.equal(res.status, 201, res.text);
    await kubectl(["wait", "--for=condition=Ready", `--timeout=${TIMEOUT}`, "awsaccount/e2e-tenant"]);
    const got = await cp.request("GET", "/apis/compute.cloud.com/v1/awsaccounts/e2e-tenant");
    assert.equal((got.body as { status?: { accountId?: string } }).status?.accountId, "222222222222");
    await kubectl(["delete", "awsaccount/e2e-tenant", `--timeout=${TIMEOUT}`]);
  });

  it("deleting the samples releases every object", async () => {
    for (const s of samples()) await kubectl(["delete", "-n", APPS, "-f", s.file, "--wait=false"]);
    await kubectl(["wait", "-n", APPS, "--for=delete", `--timeout=${TIMEOUT}`, ...sampleRefs()]);
  });

  it("each kind's finalizer write (AwsAccount's too) met a 409 Conflict (injected by a webhook) and recovered", () => {
    // The recovery re-reads the object from the API server: the only use of `get` on the kinds.
    assert.deepEqual([...(injector?.injected ?? [])].sort(), [...CRDS].sort());
  });

  it("/metrics answers a token bound to the chart's metrics-reader ClusterRole and refuses others", async () => {
    assert.ok(pod);
    await kubectl(["create", "namespace", "monitoring"]);
    const reader = await cp.serviceAccountToken("monitoring", "prometheus");
    const stranger = await cp.serviceAccountToken("monitoring", "stranger");
    await kubectl([
      "create",
      "clusterrolebinding",
      "prometheus-kp",
      `--clusterrole=${FULL}-metrics-reader`,
      "--serviceaccount=monitoring:prometheus",
    ]);
    const url = `${pod.metricsUrl}/metrics`;
    assert.match(url, /^https:/, "the chart serves metrics over HTTPS by default");
    assert.equal((await scrape(url)).status, 401);
    assert.equal((await scrape(url, stranger)).status, 403);
    const ok = await scrape(url, reader);
    assert.equal(ok.status, 200, ok.body);
    assert.ok(
      metricSum(ok.body, "controller_runtime_reconcile_total") > 0,
      "the scrape counts the reconciles",
    );
  });

  it("every metric the chart's Grafana dashboard queries is exported by the running operator", async () => {
    assert.ok(pod);
    const cm = await cp.request("GET", `/api/v1/namespaces/${NS}/configmaps/${FULL}-dashboard`);
    assert.equal(cm.status, 200, cm.text);
    const json = (cm.body as { data?: Record<string, string> }).data?.["kubeprovisioner.json"];
    assert.ok(json, "the ConfigMap holds the dashboard");
    const names = [...new Set(dashboardQueries(json).flatMap(metricNames))].sort();
    assert.ok(names.length >= 20, `the dashboard queries ${names.length} metrics: ${names.join(", ")}`);
    const token = await cp.serviceAccountToken("monitoring", "prometheus");
    const res = await scrape(`${pod.metricsUrl}/metrics`, token);
    assert.equal(res.status, 200, res.body);
    const exported = new Set(
      res.body
        .split("\n")
        .filter((l) => l !== "" && !l.startsWith("#"))
        .map((l) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(l)?.[0] ?? ""),
    );
    assert.deepEqual(
      names.filter((n) => !exported.has(n)),
      [],
      "metrics queried by the dashboard but not exported",
    );
    for (const family of ["kubeprovisioner_managed_resources", "kubeprovisioner_drift_repairs_total"]) {
      assert.ok(names.includes(family), `the dashboard shows ${family}`);
    }
    // The AWS request metrics carry the region of the client (the samples live in us-east-1).
    assert.match(res.body, /aws_api_requests_total\{service="s3",region="us-east-1",/);
  });

  it("SIGTERM stops the operator with exit code 0 and releases the Lease", async () => {
    assert.ok(pod);
    pod.process.signal("SIGTERM");
    assert.equal(await within("the operator to exit", pod.process.exited), 0);
    const lease = await cp.request("GET", LEASE);
    assert.equal((lease.body as { spec?: { holderIdentity?: string } }).spec?.holderIdentity ?? "", "");
  });

  describe("RBAC, judged from the audit log of the run above", () => {
    const roles = async (): Promise<Manifest[]> => {
      const out: Manifest[] = [];
      for (const p of [
        `/apis/rbac.authorization.k8s.io/v1/clusterroles/${FULL}-manager`,
        `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/${FULL}-leader-election`,
        `/apis/rbac.authorization.k8s.io/v1/namespaces/${APPS}/roles/${FULL}-output-secrets`,
      ]) {
        const got = await cp.request("GET", p);
        assert.equal(got.status, 200, got.text);
        out.push(got.body as Manifest);
      }
      return out;
    };

    it("no request of the ServiceAccount was refused (the chart grants enough)", async () => {
      const events = readAuditLog(auditLog);
      assert.ok(events.length > 0, `the audit log ${auditLog} has entries`);
      assert.deepEqual(refusedRequests(events, SA_USER), []);
      assert.deepEqual(ungrantedUses(grantsOf(await roles()), usedPermissions(events, SA_USER)), []);
    });

    it("every granted permission was used (the chart grants nothing more)", async () => {
      const used = usedPermissions(readAuditLog(auditLog), SA_USER);
      assert.deepEqual(
        unusedGrants(grantsOf(await roles()), used),
        [],
        `used: ${[...used].sort().join(", ")}`,
      );
    });

    it("Leases are only touched in the release namespace", () => {
      const leases = readAuditLog(auditLog).filter(
        (e) => e.user.username === SA_USER && e.objectRef?.resource === "leases",
      );
      assert.ok(leases.length > 0);
      for (const e of leases) assert.equal(e.objectRef?.namespace, NS, e.requestURI);
    });
  });

  it("in the documented uninstall order no managed object and no AwsAccount is left when the operator stops", async () => {
    // docs/install.md: objects, then AwsAccounts (their account-in-use finalizer needs the
    // operator), while the operator runs; the steps above did both before SIGTERM.
    for (const plural of CRDS) {
      const res = await cp.request("GET", `/apis/compute.cloud.com/v1/${plural}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        (res.body as { items: Manifest[] }).items.map(
          (o) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`,
        ),
        [],
        `${plural} left`,
      );
    }
  });

  it("helm uninstall removes the release but keeps the CRDs, which no release owns", async () => {
    const res = await helm(["uninstall", RELEASE, "--kubeconfig", cp.kubeconfigPath, "--namespace", NS]);
    assert.equal(res.code, 0, res.stderr);
    assert.doesNotMatch(res.stdout, /CustomResourceDefinition/, "the CRDs are not part of the release");
    for (const crd of CRDS) {
      assert.equal(
        (
          await cp.request(
            "GET",
            `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}.compute.cloud.com`,
          )
        ).status,
        200,
        crd,
      );
    }
    assert.equal((await cp.request("GET", `/apis/apps/v1/namespaces/${NS}/deployments/${FULL}`)).status, 404);
    assert.equal(
      (await cp.request("GET", `/apis/rbac.authorization.k8s.io/v1/clusterroles/${FULL}-manager`)).status,
      404,
    );
  });

  it("then the four CRDs delete without hanging on a finalizer", async () => {
    await kubectl(["delete", "crd", `--timeout=${TIMEOUT}`, ...CRDS.map((p) => `${p}.compute.cloud.com`)]);
    for (const p of CRDS) {
      const res = await cp.request(
        "GET",
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${p}.compute.cloud.com`,
      );
      assert.equal(res.status, 404, p);
    }
  });
});
