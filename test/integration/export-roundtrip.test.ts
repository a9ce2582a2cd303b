/**
 * An estate made outside the operator (with boto3, test/support/seed-estate.py) brought under it,
 * against a real API server and the test AWS behind the counting proxy:
 *
 * - `kubeprovisioner export` writes one manifest per bucket, queue and instance of the prefix,
 *   skips what another object owns (its ownership tags) with the reason, keeps a dead-letter
 *   queue outside the export as an ARN with a comment, writes one inside it as a reference, and
 *   a second export of the same estate is byte-identical;
 * - applied, every object is Ready as ObserveOnly; `plan -f` of the same manifests switched to
 *   Full says each would be adopted with its ownership tags and nothing else;
 * - `kubeprovisioner adopt -l <export label>` switches them, and the operator's AWS writes from
 *   then on, over more than two poll periods, are tag writes only;
 * - deleting an adopted object (deletionPolicy Retain) leaves its resource.
 *
 * The estate's size comes from EXPORT_ESTATE (`full`: 100 buckets, 100 queues and 10 instances,
 * by `make test-export`; by default a reduced 12 + 12 + 2 for `make test`, which still holds a foreign-owned bucket and queue and
 * dead-letter queues inside and outside the export).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { HeadBucketCommand, PutBucketLifecycleConfigurationCommand, S3Client } from "@aws-sdk/client-s3";
import { startAwsProxy, type AwsProxy } from "../support/aws-proxy.ts";
import { startBackends } from "../support/backends.ts";
import type { ControlPlane } from "../support/envtest.ts";
import type { Moto } from "../support/moto.ts";
import { startOperator, type OperatorProcess } from "../support/operator.ts";
import { operatorProgram } from "../support/operator-program.ts";
import { CommandError, repoRoot, runCommand, waitFor, WAIT_MS } from "../support/process.ts";
import { TEST_OPERATOR_FLAGS } from "../support/reconciler-env.ts";
import { seedEstate, type SeededEstate } from "../support/seed-estate.ts";

const FULL = process.env.EXPORT_ESTATE === "full";
const [BUCKETS, QUEUES, INSTANCES] = FULL ? [100, 100, 10] : [12, 12, 2];
const NS = "estate";
const PREFIX = `exp${Date.now().toString(36)}`;
const LABEL = "compute.cloud.com/export=estate";
const MUTATING =
  /^(Put|Create|Delete|Set|Tag|Untag|Modify|Run|Start|Stop|Terminate|Associate|Replace|Monitor|Unmonitor)/;
const TAGGING = new Set(["PutBucketTagging", "TagQueue", "CreateTags"]);

describe(`export and adopt an estate of ${BUCKETS + QUEUES + INSTANCES} resources`, () => {
  let cp: ControlPlane;
  let moto: Moto;
  let proxy: AwsProxy;
  let op: OperatorProcess | undefined;
  let seeded: SeededEstate;
  let dir: string;

  const env = (): NodeJS.ProcessEnv => ({
    ...process.env,
    ...moto.env,
    AWS_ENDPOINT_URL: proxy.endpoint,
    AWS_EC2_METADATA_DISABLED: "true",
    KUBECONFIG: cp.kubeconfigPath,
  });
  /** A client of the test AWS itself, for what the test does there outside the operator. */
  const awsS3 = (): S3Client =>
    new S3Client({
      region: "us-east-1",
      endpoint: moto.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
    });
  /** The bucket given a lifecycle rule on a date: the second, not foreign-owned, not the one deleted. */
  const datedBucket = (): string => seeded.buckets[1] ?? "";
  const run = async (cmd: string, args: string[]) => {
    try {
      return { code: 0, ...(await runCommand(cmd, args, { env: env() })) };
    } catch (err) {
      if (!(err instanceof CommandError)) throw err;
      return { code: err.code ?? -1, stdout: err.stdout, stderr: err.stderr };
    }
  };
  const program = (args: string[]) => run(process.execPath, [operatorProgram(), ...args]);
  const kubectl = (args: string[]) => run(path.join(repoRoot, "bin/kubectl"), args);
  /** Every object of the export, as served. */
  const objects = async () => {
    const res = await kubectl(["get", "ec2,s3b,sqsq", "-n", NS, "-l", LABEL, "-o", "json"]);
    assert.equal(res.code, 0, res.stderr);
    return (
      JSON.parse(res.stdout) as {
        items: {
          kind: string;
          metadata: { name: string; generation?: number };
          spec: { managementPolicy: string };
          status?: {
            conditions?: { type: string; status: string; reason: string; observedGeneration?: number }[];
          };
        }[];
      }
    ).items;
  };
  const condition = (o: Awaited<ReturnType<typeof objects>>[number], type: string) =>
    o.status?.conditions?.find((c) => c.type === type);
  /** Whether condition `type` of `o` is True for its current generation. */
  const trueNow = (o: Awaited<ReturnType<typeof objects>>[number], type: string): boolean => {
    const c = condition(o, type);
    return c?.status === "True" && c.observedGeneration === o.metadata.generation;
  };

  before(async () => {
    ({ cp, moto } = await startBackends({ installCRDs: true }));
    proxy = await startAwsProxy(moto.endpoint, { resources: true });
    await cp.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
    seeded = await seedEstate(
      moto.endpoint,
      { buckets: BUCKETS, queues: QUEUES, instances: INSTANCES },
      PREFIX,
    );
    // A bucket whose lifecycle rule expires objects on a date, which no spec can ask for.
    const s3 = awsS3();
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: datedBucket(),
        LifecycleConfiguration: {
          Rules: [
            {
              ID: "dated",
              Status: "Enabled",
              Filter: { Prefix: "" },
              Expiration: { Date: new Date("2030-01-01T00:00:00Z") },
            },
          ],
        },
      }),
    );
    s3.destroy();
    op = await startOperator({
      kubeconfig: cp.kubeconfigPath,
      env: { ...moto.env, AWS_ENDPOINT_URL: proxy.endpoint },
      dir: cp.dir,
      name: "operator-export",
      args: [...TEST_OPERATOR_FLAGS, "--adoption=enabled"],
    });
    dir = path.join(cp.dir, "export");
  });
  after(async () => {
    await op?.stop();
    await proxy?.stop();
    await moto?.stop();
    await cp?.stop();
  });

  it("exports every resource of the prefix, skips the foreign-owned ones, and does it the same way twice", async () => {
    const from = Date.now();
    const args = ["export", "--region=us-east-1", `--prefix=${PREFIX}`, "-n", NS, "--name=estate"];
    const first = await program([...args, "-o", dir]);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(
      proxy.calls.filter((c) => c.at >= from && MUTATING.test(c.operation)).map((c) => c.operation),
      [],
      "an export makes no AWS write",
    );
    const files = (sub: string): string[] => readdirSync(path.join(dir, sub)).sort();
    assert.equal(files("s3buckets").length, seeded.buckets.length);
    assert.equal(files("sqsqueues").length, seeded.queues.length);
    assert.equal(files("ec2instances").length, seeded.instances.length);
    for (const name of seeded.foreign) {
      assert.match(
        first.stderr,
        new RegExp(`^skipped (S3Bucket|SqsQueue) ${name.replace(".", "\\.")}: its ownership tags name`, "m"),
      );
    }
    assert.match(
      first.stderr,
      new RegExp(
        `${seeded.buckets.length + seeded.queues.length + seeded.instances.length} written, ${seeded.foreign.length} skipped, 0 failed`,
      ),
    );
    // What no spec can ask for is left out, said in the manifest and on standard error, and the
    // setting is left unmanaged, so that the adoption below does not remove it.
    const dated = readFileSync(path.join(dir, "s3buckets", `${datedBucket()}.yaml`), "utf8");
    assert.match(
      dated,
      /^# left out \(the API cannot express it\): lifecycleRules: rule dated expires objects on a date/m,
    );
    assert.doesNotMatch(dated, /lifecycleRules:\n/);
    assert.match(
      first.stderr,
      new RegExp(`^left out of S3Bucket ${datedBucket()}: lifecycleRules: rule dated `, "m"),
    );
    // References: a dead-letter queue of the export is a reference; one outside it stays an ARN.
    const texts = files("sqsqueues").map((f) => readFileSync(path.join(dir, "sqsqueues", f), "utf8"));
    assert.ok(
      texts.some((t) => /queueRef:\n\s+name: /.test(t)),
      "a reference to an exported queue",
    );
    assert.ok(
      texts.some((t) =>
        /^# spec\.deadLetterQueue\.targetArn stays the ARN arn:aws:sqs:us-east-1:\d+:outside-/m.test(t),
      ),
      "an ARN outside the export, said so",
    );
    // A dead-letter queue another object owns is skipped, so it stays an ARN too, never a
    // reference to an object the export does not write.
    const foreignQueues = seeded.foreign.filter((n) => n.includes("-queue-"));
    assert.ok(
      texts.some((t) =>
        foreignQueues.some(
          (n) =>
            t.includes(`# spec.deadLetterQueue.targetArn stays the ARN arn:aws:sqs:us-east-1:`) &&
            t.includes(`:${n}: this export does not hold it`),
        ),
      ),
      "a dead-letter queue another object owns, named by ARN",
    );
    const exportedNames = new Set(files("sqsqueues").map((f) => f.replace(/\.yaml$/, "")));
    for (const t of texts)
      for (const m of t.matchAll(/queueRef:\n\s+name: (\S+)/g))
        assert.ok(exportedNames.has(m[1] ?? ""), `queueRef ${m[1]} names an exported object`);
    // Byte-identical the second time, as one stream too.
    const stream = await program(args);
    assert.equal(stream.code, 0, stream.stderr);
    const again = await program(args);
    assert.equal(again.stdout, stream.stdout);
    const second = path.join(cp.dir, "export-2");
    await program([...args, "-o", second]);
    for (const sub of ["s3buckets", "sqsqueues", "ec2instances"]) {
      for (const f of files(sub)) {
        assert.equal(
          readFileSync(path.join(second, sub, f), "utf8"),
          readFileSync(path.join(dir, sub, f), "utf8"),
          `${sub}/${f}`,
        );
      }
    }
  });

  it("applies as observe-only objects, all Ready, and plans an adoption of ownership tags alone", async () => {
    const applied = await kubectl(["apply", "-R", "-f", dir]);
    assert.equal(applied.code, 0, applied.stderr);
    const total = seeded.buckets.length + seeded.queues.length + seeded.instances.length;
    await waitFor(
      "every exported object Ready",
      async () => (await objects()).filter((o) => condition(o, "Ready")?.status === "True").length === total,
      WAIT_MS * 2,
    );
    // The same manifests switched to Full: what the adoption will do.
    const full = path.join(cp.dir, "export-full");
    const copy = await run("/bin/cp", ["-r", dir, full]);
    assert.equal(copy.code, 0);
    for (const sub of ["s3buckets", "sqsqueues", "ec2instances"]) {
      for (const f of readdirSync(path.join(full, sub))) {
        const p = path.join(full, sub, f);
        writeFileSync(
          p,
          readFileSync(p, "utf8").replace("managementPolicy: ObserveOnly", "managementPolicy: Full"),
        );
      }
    }
    const plan = await program(["plan", "-R", "-f", full, "-o", "json", "--adoption=enabled"]);
    assert.equal(plan.code, 2, plan.stderr);
    const objectsPlanned = (
      JSON.parse(plan.stdout) as {
        objects: { kind: string; name: string; action: string; changes: { path: string }[] }[];
      }
    ).objects;
    assert.equal(objectsPlanned.length, total);
    for (const o of objectsPlanned) {
      assert.equal(o.action, "adopt", `${o.kind} ${o.name}: ${JSON.stringify(o)}`);
      const other = o.changes.filter((c) => !c.path.startsWith("tags[") && !c.path.startsWith("tags."));
      assert.deepEqual(other, [], `${o.kind} ${o.name} would change more than its ownership tags`);
    }
  });

  it("adopts the set with tag writes only, and a deleted object with Retain leaves its resource", async () => {
    const from = Date.now();
    const adopted = await program(["adopt", "-l", LABEL, "-n", NS]);
    assert.equal(adopted.code, 0, adopted.stderr);
    const total = seeded.buckets.length + seeded.queues.length + seeded.instances.length;
    await waitFor(
      "every object managed, Ready and Synced",
      async () =>
        (await objects()).filter(
          (o) => o.spec.managementPolicy === "Full" && trueNow(o, "Ready") && trueNow(o, "Synced"),
        ).length === total,
      WAIT_MS * 2,
    );
    // Over more than two poll periods (1 s each) after that.
    const settled = Date.now();
    await waitFor("three poll periods", async () => Date.now() - settled > 3_000, 10_000, 200);
    const writes = proxy.calls.filter((c) => c.at >= from && MUTATING.test(c.operation));
    assert.deepEqual(
      writes.filter((c) => !TAGGING.has(c.operation)).map((c) => `${c.operation} ${c.resource ?? ""}`),
      [],
      "adoption writes ownership tags and nothing else",
    );
    assert.ok(writes.length >= total, `every resource got its ownership tags (${writes.length} tag writes)`);

    // Retain: the object goes, the bucket stays.
    const bucket = seeded.buckets[0] ?? "";
    const obj = (await objects()).find((o) => o.kind === "S3Bucket" && o.metadata.name === bucket);
    assert.ok(obj !== undefined, `the object of bucket ${bucket}`);
    const deleted = await kubectl(["delete", "s3bucket", "-n", NS, obj.metadata.name, "--wait=true"]);
    assert.equal(deleted.code, 0, deleted.stderr);
    const s3 = awsS3();
    await s3.send(new HeadBucketCommand({ Bucket: bucket }));
    s3.destroy();
  });
});
