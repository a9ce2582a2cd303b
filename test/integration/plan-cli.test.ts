/**
 * `kubeprovisioner plan`, the program itself, against a real API server (with an audit log of
 * every request) and the test AWS behind the counting proxy. With the operator stopped, so that
 * every request in the window is the command's:
 *
 * - `--live` lists what drifted out of band (a bucket's versioning, a queue's visibility
 *   timeout, a tag) with its path, observed and desired values and IAM action, says in sync for
 *   the rest, and exits 2; the proxy saw reads only and the audit log shows get, list and watch
 *   only, under the command's User-Agent;
 * - `-f` plans manifests as `kubectl apply -f` would apply them: the CRD's defaults applied as the
 *   API server applies them (a manifest equal to a live object's is in sync, exit 0), a new
 *   object is a create with the create's actions, and a folder, `-` and a List are read;
 * - `kubectl kp plan` runs the same program as a kubectl plugin;
 * - once the operator runs again, the mutating calls it makes are exactly the plan's actions,
 *   and a new plan says in sync.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync, chmodSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { PutBucketVersioningCommand, S3Client } from "@aws-sdk/client-s3";
import {
  SetQueueAttributesCommand,
  SQSClient,
  TagQueueCommand,
  GetQueueUrlCommand,
} from "@aws-sdk/client-sqs";
import { KINDS } from "../../src/kinds.ts";
import { callsOf } from "../../src/reconcilers/common/kind.ts";
import { auditFlags, readAudit } from "../support/audit.ts";
import { startAwsProxy, type AwsProxy } from "../support/aws-proxy.ts";
import { startBackends } from "../support/backends.ts";
import type { ControlPlane } from "../support/envtest.ts";
import type { Moto } from "../support/moto.ts";
import { startOperator, type OperatorProcess } from "../support/operator.ts";
import { operatorProgram } from "../support/operator-program.ts";
import { CommandError, repoRoot, runCommand, waitFor, WAIT_MS } from "../support/process.ts";
import { TEST_OPERATOR_FLAGS } from "../support/reconciler-env.ts";

const NS = "plan";
const MUTATING =
  /^(Put|Create|Delete|Set|Tag|Untag|Modify|Run|Start|Stop|Terminate|Associate|Replace|Monitor|Unmonitor|Attach|Detach)/;

interface PlanJson {
  schemaVersion: number;
  objects: {
    kind: string;
    namespace: string;
    name: string;
    action: string;
    changes: { path: string; observed?: unknown; desired?: unknown; actions: string[]; disruption: string }[];
  }[];
  summary: Record<string, number>;
}

describe("kubeprovisioner plan", () => {
  let cp: ControlPlane;
  let moto: Moto;
  let proxy: AwsProxy;
  let op: OperatorProcess | undefined;
  let auditFile: string;
  const env = (): NodeJS.ProcessEnv => ({
    ...process.env,
    ...moto.env,
    AWS_ENDPOINT_URL: proxy.endpoint,
    AWS_EC2_METADATA_DISABLED: "true",
    KUBECONFIG: cp.kubeconfigPath,
  });
  const s3 = (): S3Client =>
    new S3Client({
      region: "us-east-1",
      endpoint: moto.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
    });
  const sqs = (): SQSClient =>
    new SQSClient({
      region: "us-east-1",
      endpoint: moto.endpoint,
      credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
    });

  /** Runs the program with `args`; resolves with its exit status and output. */
  const run = async (
    args: string[],
    opts: { stdinFile?: string; cmd?: string; pathPrefix?: string } = {},
  ) => {
    let cmd = opts.cmd ?? process.execPath;
    let argv = opts.cmd === undefined ? [operatorProgram(), ...args] : args;
    if (opts.stdinFile !== undefined) {
      const quoted = [cmd, ...argv].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
      argv = ["-c", `exec ${quoted} < '${opts.stdinFile}'`];
      cmd = "/bin/sh";
    }
    const e = env();
    if (opts.pathPrefix !== undefined) e.PATH = `${opts.pathPrefix}${path.delimiter}${e.PATH ?? ""}`;
    try {
      const out = await runCommand(cmd, argv, { env: e });
      return { code: 0, ...out };
    } catch (err) {
      if (!(err instanceof CommandError)) throw err;
      return { code: err.code ?? -1, stdout: err.stdout, stderr: err.stderr };
    }
  };
  const objects = (kind: string) => `/apis/compute.cloud.com/v1/namespaces/${NS}/${kind}`;
  const create = async (plural: string, kind: string, name: string, spec: Record<string, unknown>) => {
    const res = await cp.request("POST", objects(plural), {
      apiVersion: "compute.cloud.com/v1",
      kind,
      metadata: { name },
      spec,
    });
    assert.equal(res.status, 201, res.text);
  };
  const waitReady = (plural: string, name: string) =>
    waitFor(
      `${name} Ready`,
      async () => {
        const res = await cp.request("GET", `${objects(plural)}/${name}`);
        const o = JSON.parse(res.text) as { status?: { conditions?: { type: string; status: string }[] } };
        return o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
      },
      WAIT_MS,
    );
  const startOp = async () => {
    op = await startOperator({
      kubeconfig: cp.kubeconfigPath,
      env: { ...moto.env, AWS_ENDPOINT_URL: proxy.endpoint },
      dir: cp.dir,
      name: `operator-${Date.now()}`,
      args: [...TEST_OPERATOR_FLAGS],
    });
  };

  const bucketSpec = { bucketName: "plan-b1", region: "us-east-1", versioning: true, tags: { team: "a" } };
  const queueSpec = { queueName: "plan-q1", region: "us-east-1", visibilityTimeoutSeconds: 30 };
  const syncedSpec = { queueName: "plan-q2", region: "us-east-1", delaySeconds: 5 };

  before(async () => {
    const audit = auditFlags({ reads: true });
    auditFile = audit.file;
    ({ cp, moto } = await startBackends({ installCRDs: true, apiServerFlags: audit.flags }));
    proxy = await startAwsProxy(moto.endpoint, { resources: true });
    await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
    await startOp();
    await create("s3buckets", "S3Bucket", "b1", bucketSpec);
    await create("sqsqueues", "SqsQueue", "q1", queueSpec);
    await create("sqsqueues", "SqsQueue", "q2", syncedSpec);
    await Promise.all([
      waitReady("s3buckets", "b1"),
      waitReady("sqsqueues", "q1"),
      waitReady("sqsqueues", "q2"),
    ]);
    await op?.stop();
    op = undefined;
    // Out of band, straight at the test AWS.
    await s3().send(
      new PutBucketVersioningCommand({ Bucket: "plan-b1", VersioningConfiguration: { Status: "Suspended" } }),
    );
    const { QueueUrl } = await sqs().send(new GetQueueUrlCommand({ QueueName: "plan-q1" }));
    await sqs().send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { VisibilityTimeout: "45" } }));
    await sqs().send(new TagQueueCommand({ QueueUrl, Tags: { stray: "x" } }));
  });
  after(async () => {
    await op?.stop();
    await proxy?.stop();
    await moto?.stop();
    await cp?.stop();
  });

  let livePlan: PlanJson;

  it("--live lists the out-of-band changes, exits 2, and makes AWS reads and Kubernetes reads only", async () => {
    const from = Date.now();
    const auditFrom = readAudit(auditFile).length;
    const res = await run(["plan", "--live", "-n", NS, "-o", "json"]);
    const to = Date.now();
    assert.equal(res.code, 2, res.stderr);
    livePlan = JSON.parse(res.stdout) as PlanJson;
    assert.equal(livePlan.schemaVersion, 1);
    const byName = new Map(livePlan.objects.map((o) => [o.name, o]));
    const b1 = byName.get("b1");
    assert.equal(b1?.action, "update");
    assert.deepEqual(
      b1?.changes.map((c) => [c.path, c.actions, c.disruption]),
      [["spec.versioning", ["s3:PutBucketVersioning"], "none"]],
    );
    const q1 = byName.get("q1");
    assert.equal(q1?.action, "update");
    assert.deepEqual(
      q1?.changes.map((c) => [c.path, c.observed, c.desired, c.actions]),
      [
        ["spec.tags.stray", "x", undefined, ["sqs:UntagQueue"]],
        ["spec.visibilityTimeoutSeconds", 45, 30, ["sqs:SetQueueAttributes"]],
      ],
    );
    assert.equal(byName.get("q2")?.action, "in-sync");
    assert.deepEqual(
      [livePlan.summary.objects, livePlan.summary.update, livePlan.summary.inSync, livePlan.summary.changes],
      [3, 2, 1, 3],
    );

    const calls = proxy.calls.filter((c) => c.at >= from && c.at <= to);
    assert.ok(calls.length > 0, "the plan read from AWS");
    assert.deepEqual(
      calls.filter((c) => MUTATING.test(c.operation)).map((c) => c.operation),
      [],
      "a plan makes no mutating AWS call",
    );
    const requests = readAudit(auditFile)
      .slice(auditFrom)
      .filter((e) => e.userAgent?.startsWith("kubeprovisioner-plan") === true);
    assert.ok(
      requests.some((e) => e.verb === "list"),
      "the plan listed from the API server",
    );
    assert.deepEqual(
      [...new Set(requests.map((e) => e.verb))].filter((v) => !["get", "list", "watch"].includes(v)),
      [],
      "a plan makes no Kubernetes write",
    );
  });

  it("-f plans manifests as applied: the defaults the API server applies, a create, a folder, stdin and a List", async () => {
    const dir = path.join(cp.dir, "manifests");
    mkdirSync(path.join(dir, "sub"), { recursive: true });
    const doc = (kind: string, name: string, spec: Record<string, unknown>) =>
      JSON.stringify({ apiVersion: "compute.cloud.com/v1", kind, metadata: { name, namespace: NS }, spec });
    // The same spec the live q2 was created with, without the defaults: in sync.
    writeFileSync(path.join(dir, "q2.yaml"), `# as applied\n${doc("SqsQueue", "q2", syncedSpec)}\n---\n`);
    writeFileSync(path.join(dir, "notes.txt"), "not a manifest");
    writeFileSync(
      path.join(dir, "sub", "new.yml"),
      `apiVersion: v1\nkind: List\nitems:\n- ${doc("S3Bucket", "b-new", { bucketName: "plan-b-new", region: "us-east-1" })}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n`,
    );
    const inSync = await run(["plan", "-f", path.join(dir, "q2.yaml"), "-o", "json"]);
    assert.equal(inSync.code, 0, inSync.stderr + inSync.stdout);
    assert.equal((JSON.parse(inSync.stdout) as PlanJson).objects[0]?.action, "in-sync");

    const folder = await run(["plan", "-f", dir, "-R", "-o", "json"]);
    assert.equal(folder.code, 2, folder.stderr);
    const plan = JSON.parse(folder.stdout) as PlanJson;
    assert.deepEqual(
      plan.objects.map((o) => [o.kind, o.name, o.action]),
      [
        ["SqsQueue", "q2", "in-sync"],
        ["S3Bucket", "b-new", "create"],
      ],
    );
    assert.equal(plan.objects[1]?.changes[0]?.path, "spec");
    assert.equal(plan.objects[1]?.changes[0]?.actions[0], "s3:CreateBucket");
    assert.match(folder.stderr, /1 object\(s\) of other kinds not planned/);
    const notRecursive = await run(["plan", "-f", dir, "-o", "json"]);
    assert.deepEqual(
      (JSON.parse(notRecursive.stdout) as PlanJson).objects.map((o) => o.name),
      ["q2"],
    );

    const piped = path.join(cp.dir, "piped.json");
    writeFileSync(piped, doc("S3Bucket", "b-new", { bucketName: "plan-b-new", region: "us-east-1" }));
    const stdin = await run(["plan", "-f", "-"], { stdinFile: piped });
    assert.equal(stdin.code, 2);
    assert.match(stdin.stdout, /^S3Bucket plan\/b-new: create$/m);
    assert.match(stdin.stdout, /^Plan: 1 to create, 0 to update, 0 to adopt, 0 in sync; /m);

    const mismatch = await run(["plan", "-f", path.join(dir, "q2.yaml"), "-n", "other"]);
    assert.equal(mismatch.code, 1);
    assert.match(mismatch.stderr, /does not match the namespace "other"/);
  });

  it("runs as the kubectl plugin kubectl-kp", async () => {
    const bin = path.join(cp.dir, "plugin-bin");
    mkdirSync(bin, { recursive: true });
    const plugin = path.join(bin, "kubectl-kp");
    writeFileSync(
      plugin,
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(operatorProgram())} "$@"\n`,
    );
    chmodSync(plugin, 0o755);
    const res = await run(["kp", "plan", "--live", "-n", NS], {
      cmd: path.join(repoRoot, "bin/kubectl"),
      pathPrefix: bin,
    });
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stdout, /^S3Bucket plan\/b1: update$/m);
  });

  it("is what the operator then does: its mutating calls are the plan's actions, and a new plan is in sync", async () => {
    const from = Date.now();
    await startOp();
    const planned = livePlan.objects.flatMap((o) => o.changes.flatMap((c) => c.actions));
    const operations = (actions: string[]) =>
      actions
        .flatMap((a) => {
          const iam = KINDS.flatMap((k) => k.iam).find((i) => i.action === a);
          assert.ok(iam !== undefined, `${a} is in a kind's IAM table`);
          return callsOf(iam)
            .filter((op) => MUTATING.test(op))
            .slice(0, 1);
        })
        .sort();
    await waitFor(
      "the repairs",
      async () =>
        proxy.calls.filter((c) => c.at >= from && MUTATING.test(c.operation)).length >= new Set(planned).size,
      WAIT_MS,
    );
    const again = await run(["plan", "--live", "-n", NS, "-o", "json"]);
    assert.equal(again.code, 0, again.stdout);
    assert.deepEqual(
      proxy.calls
        .filter((c) => c.at >= from && MUTATING.test(c.operation))
        .map((c) => c.operation)
        .sort(),
      operations([...new Set(planned)]),
    );
  });
});
