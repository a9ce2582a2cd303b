/**
 * IAM policies written the way every AWS example writes them, applied with kubectl onto CRDs
 * installed the two ways users install them: `kubectl apply -k config/crd`, and the chart by
 * `helm install`. A bucket policy and a queue policy with `Version: "2012-10-17"` are admitted and
 * reach AWS (moto) unchanged; a policy without Version reaches AWS as 2012-10-17; an unquoted
 * `Version: 2012-10-17`, which kustomize's YAML 1.1 reader (`kubectl apply -k`) turns into a
 * timestamp, is refused with a message saying to quote it (`kubectl apply -f` keeps it a string).
 * Tag values quoted as docs/api.md asks (a date, `yes`, `0777`) reach AWS as written; unquoted,
 * `kubectl apply -f` makes a boolean or a number of them, which admission refuses.
 */
import assert from "node:assert/strict";
import { GetBucketPolicyCommand, GetBucketTaggingCommand } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startBackends } from "../support/backends.ts";
import type { ControlPlane } from "../support/envtest.ts";
import type { Moto } from "../support/moto.ts";
import { startOperator, type OperatorProcess } from "../support/operator.ts";
import { repoRoot, trackTempDir } from "../support/process.ts";
import { motoClients } from "./flow-support.ts";
import { differences, jsonObjects, kubectlReads } from "../support/yaml-readers.ts";
import { CHART_DIR, helm } from "./helm.ts";

const NS = "policies";
const TIMEOUT = "120s";

const bucket = (name: string, version: string | undefined): string =>
  `apiVersion: compute.cloud.com/v1
kind: S3Bucket
metadata:
  name: ${name}
  namespace: ${NS}
spec:
  bucketName: ${name}
  region: us-east-1
  policy:
${version === undefined ? "" : `    Version: ${version}\n`}    Statement:
      - Sid: DenyInsecureTransport
        Effect: Deny
        Principal: "*"
        Action: "s3:*"
        Resource: "arn:aws:s3:::${name}/*"
        Condition:
          Bool: { "aws:SecureTransport": "false" }
`;

const queue = (name: string, version: string | undefined): string =>
  `apiVersion: compute.cloud.com/v1
kind: SqsQueue
metadata:
  name: ${name}
  namespace: ${NS}
spec:
  queueName: ${name}
  region: us-east-1
  policy:
${version === undefined ? "" : `    Version: ${version}\n`}    Statement:
      - Sid: OwnAccountOnly
        Effect: Allow
        Principal: { AWS: "arn:aws:iam::123456789012:root" }
        Action: "sqs:SendMessage"
        Resource: "arn:aws:sqs:us-east-1:123456789012:${name}"
`;

const INSTALLS = [
  {
    how: "kubectl apply -k config/crd",
    // Once is enough for what does not depend on how the CRDs came: the file reader, tag values.
    checksReader: true,
    install: (cp: ControlPlane) => cp.kubectl(["apply", "-k", path.join(repoRoot, "config/crd")]),
  },
  {
    how: "helm install of the chart",
    checksReader: false,
    install: async (cp: ControlPlane) => {
      const res = await helm([
        "install",
        "kp",
        CHART_DIR,
        "--kubeconfig",
        cp.kubeconfigPath,
        "--namespace",
        "kp-system",
        "--create-namespace",
      ]);
      assert.equal(res.code, 0, res.stderr);
    },
  },
] as const;

for (const { how, install, checksReader } of INSTALLS) {
  describe(`policy Version on CRDs installed by ${how}`, () => {
    let cp: ControlPlane;
    let moto: Moto;
    let op: OperatorProcess | undefined;
    let aws: ReturnType<typeof motoClients>;

    before(async () => {
      ({ cp, moto } = await startBackends());
      aws = motoClients(moto);
      await install(cp);
      await cp.kubectl(["wait", "--for=condition=Established", `--timeout=${TIMEOUT}`, "crd", "--all"]);
      await cp.kubectl(["create", "namespace", NS]);
      op = await startOperator({
        kubeconfig: cp.kubeconfigPath,
        dir: cp.dir,
        env: moto.env,
        args: ["--leader-elect=false", "--poll-interval=2s"],
      });
    });
    after(async () => {
      aws?.destroy();
      await op?.stop();
      await Promise.allSettled([cp?.stop(), moto?.stop()]);
    });

    it('admits Version: "2012-10-17" on a bucket and a queue, and AWS gets it unchanged; no Version reaches AWS as 2012-10-17', async () => {
      const objects = [
        bucket("policy-quoted", '"2012-10-17"'),
        bucket("policy-default", undefined),
        queue("policy-jobs", '"2012-10-17"'),
        queue("policy-jobs-default", undefined),
      ];
      await cp.kubectl(["apply", "-f", "-"], { input: objects.join("---\n") });
      for (const plural of ["s3buckets", "sqsqueues"]) {
        const stored = await cp.kubectl([
          "get",
          "-n",
          NS,
          plural,
          "-o",
          "jsonpath={.items[*].spec.policy.Version}",
        ]);
        assert.equal(stored.stdout, "2012-10-17 2012-10-17", `${plural} stored (the default filled in)`);
      }
      await cp.kubectl([
        "wait",
        "-n",
        NS,
        "--for=condition=Ready",
        `--timeout=${TIMEOUT}`,
        "s3bucket/policy-quoted",
        "s3bucket/policy-default",
        "sqsqueue/policy-jobs",
        "sqsqueue/policy-jobs-default",
      ]);
      for (const name of ["policy-quoted", "policy-default"]) {
        const got = await aws.s3.send(new GetBucketPolicyCommand({ Bucket: name }));
        const policy = JSON.parse(got.Policy ?? "{}") as { Version?: unknown };
        assert.equal(policy.Version, "2012-10-17", `${name}: the bucket policy AWS holds`);
      }
      for (const name of ["policy-jobs", "policy-jobs-default"]) {
        const url = (await aws.sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
        const attrs = await aws.sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["Policy"] }),
        );
        const policy = JSON.parse(attrs.Attributes?.Policy ?? "{}") as {
          Version?: unknown;
          Statement?: unknown[];
        };
        assert.equal(policy.Version, "2012-10-17", `${name}: the queue policy AWS holds`);
        assert.equal(policy.Statement?.length, 1);
      }
    });

    if (checksReader)
      it("kubectl create --dry-run=client reads config/ as the offline reader of the round-trip test does", async () => {
        const findings: string[] = [];
        for (const dir of readdirSync(path.join(repoRoot, "config")).map((d) => `config/${d}`))
          for (const f of readdirSync(path.join(repoRoot, dir)).filter(
            (x) => x.endsWith(".yaml") && x !== "kustomization.yaml",
          )) {
            const file = path.join(repoRoot, dir, f);
            const created = jsonObjects(
              (await cp.kubectl(["create", "--dry-run=client", "-o", "json", "-f", file])).stdout,
            );
            const offline = await kubectlReads(readFileSync(file, "utf8"));
            assert.equal(offline.length, created.length, `${dir}/${f}: objects`);
            created.forEach((c, i) => {
              // create fills in the context's namespace for a namespaced object that names none.
              const meta = (o: unknown) => (o as { metadata?: { namespace?: string } } | undefined)?.metadata;
              if (meta(offline[i])?.namespace === undefined) delete meta(c)?.namespace;
              findings.push(...differences(c, offline[i]).map((d) => `${dir}/${f} ${d}`));
            });
          }
        assert.deepEqual(findings, []);
      });

    if (checksReader)
      it("tag values: quoted dates and switches reach AWS as written; kubectl apply -f refuses an unquoted yes or 0777", async () => {
        const tagged = (name: string, tags: string): string =>
          `apiVersion: compute.cloud.com/v1
kind: S3Bucket
metadata:
  name: ${name}
  namespace: ${NS}
spec:
  bucketName: ${name}
  region: us-east-1
  tags:
${tags}`;
        await cp.kubectl(["apply", "-f", "-"], {
          input: tagged("tags-quoted", '    release: "2024-01-01"\n    enabled: "yes"\n    mode: "0777"\n'),
        });
        await cp.kubectl([
          "wait",
          "-n",
          NS,
          "--for=condition=Ready",
          `--timeout=${TIMEOUT}`,
          "s3bucket/tags-quoted",
        ]);
        const tagSet =
          (await aws.s3.send(new GetBucketTaggingCommand({ Bucket: "tags-quoted" }))).TagSet ?? [];
        const tags = Object.fromEntries(tagSet.map((t) => [t.Key, t.Value]));
        assert.deepEqual([tags.release, tags.enabled, tags.mode], ["2024-01-01", "yes", "0777"]);

        for (const [value, type] of [
          ["yes", "boolean"],
          ["0777", "integer"],
        ] as const) {
          const refused = await cp
            .kubectl(["apply", "-f", "-"], { input: tagged("tags-unquoted", `    v: ${value}\n`) })
            .then(
              () => undefined,
              (err: unknown) => String((err as { stderr?: string }).stderr ?? err),
            );
          assert.ok(refused !== undefined, `an unquoted ${value} is refused`);
          assert.match(refused, new RegExp(`spec\\.tags\\.v: Invalid value: "${type}"`));
        }
      });

    it("refuses an unquoted Version that kustomize read as a timestamp, saying to quote it", async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), "kp-policy-"));
      trackTempDir(dir);
      writeFileSync(path.join(dir, "bucket.yaml"), bucket("policy-unquoted", "2012-10-17"));
      writeFileSync(path.join(dir, "kustomization.yaml"), "resources:\n  - bucket.yaml\n");
      const refused = await cp.kubectl(["apply", "-k", dir]).then(
        () => undefined,
        (err: unknown) => String((err as { stderr?: string }).stderr ?? err),
      );
      assert.ok(refused !== undefined, "kubectl apply -k of an unquoted Version is refused");
      assert.match(refused, /spec\.policy\.Version/);
      assert.match(refused, /Version arrived as the timestamp 2012-10-17T00:00:00Z/);
      assert.match(refused, /Quote it: Version: "2012-10-17"/);
      const gone = await cp.request(
        "GET",
        `/apis/compute.cloud.com/v1/namespaces/${NS}/s3buckets/policy-unquoted`,
      );
      assert.equal(gone.status, 404);

      // kubectl apply -f reads the same file with go-yaml, which keeps an unquoted date a string.
      await cp.kubectl(["apply", "-f", path.join(dir, "bucket.yaml")]);
      const applied = await cp.kubectl([
        "get",
        "-n",
        NS,
        "s3bucket/policy-unquoted",
        "-o",
        "jsonpath={.spec.policy.Version}",
      ]);
      assert.equal(applied.stdout, "2012-10-17");
    });
  });
}
