/**
 * `kubeprovisioner export --account NAME` and its progress on a terminal, against a real API
 * server and the test AWS (which keeps each account's resources apart by the credentials of an
 * assumed role), with the operator running so that the AwsAccount is resolved and its status
 * written as the export reads it:
 *
 * - buckets and queues made outside the operator in the AwsAccount's AWS account are exported
 *   with `--account`, and those of the operator's own account are not; without `--account` the
 *   reverse holds; `--account` naming no AwsAccount exits 1 saying so;
 * - with standard error on a pseudo-terminal the export shows `read N/M` there, every 50
 *   resources and at the end, and its manifests on standard output hold none of it; with standard
 *   error on a pipe it shows none.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import path from "node:path";
import { before, describe, it } from "node:test";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { CreateQueueCommand, SQSClient } from "@aws-sdk/client-sqs";
import { AssumeRoleCommand, STSClient } from "@aws-sdk/client-sts";
import type { AwsAccount } from "../../src/api/v1/index.ts";
import { operatorProgram } from "../support/operator-program.ts";
import { CommandError, repoRoot, runCommand, waitFor, WAIT_MS } from "../support/process.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const NS = "export-account";
const TENANT_ACCOUNT = "222222222222";
const TENANT_ROLE = `arn:aws:iam::${TENANT_ACCOUNT}:role/tenant`;
const PREFIX = `xa${Date.now().toString(36)}`;
/** Queues beyond the first in the operator's own account: enough for a progress line before the last. */
const MORE_OWN_QUEUES = 50;

const env = new SqsEnv(NS).hooks();

type Creds = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

/** Credentials of the tenant's account, assumed from outside the operator (straight at the test AWS). */
async function tenantCredentials(): Promise<Creds> {
  const sts = new STSClient({
    region: "us-east-1",
    endpoint: env.moto.endpoint,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
  });
  try {
    const out = await sts.send(new AssumeRoleCommand({ RoleArn: TENANT_ROLE, RoleSessionName: "seed" }));
    const c = out.Credentials;
    assert.ok(c?.AccessKeyId && c.SecretAccessKey && c.SessionToken);
    return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken };
  } finally {
    sts.destroy();
  }
}

/** Makes `bucket` and `queues` in the account of `credentials`, as a user would outside the operator. */
async function seed(credentials: Creds, bucket: string, queues: readonly string[]): Promise<void> {
  const config = { region: "us-east-1", endpoint: env.moto.endpoint, credentials };
  const s3 = new S3Client({ ...config, forcePathStyle: true });
  const sqs = new SQSClient(config);
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    for (let i = 0; i < queues.length; i += 10) {
      await Promise.all(
        queues.slice(i, i + 10).map((q) => sqs.send(new CreateQueueCommand({ QueueName: q }))),
      );
    }
  } finally {
    s3.destroy();
    sqs.destroy();
  }
}

/** The exit status and output of a command; a non-zero exit is an outcome, not an error. */
async function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const commandEnv = {
    ...process.env,
    ...env.moto.env,
    AWS_ENDPOINT_URL: env.proxy.endpoint,
    AWS_EC2_METADATA_DISABLED: "true",
    KUBECONFIG: env.cp.kubeconfigPath,
  };
  try {
    return { code: 0, ...(await runCommand(cmd, args, { env: commandEnv })) };
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    return { code: err.code ?? -1, stdout: err.stdout, stderr: err.stderr };
  }
}

/** The arguments of `kubeprovisioner export` over this file's prefix. */
const exportArgs = (more: string[]): string[] => [
  operatorProgram(),
  "export",
  "--region=us-east-1",
  `--prefix=${PREFIX}`,
  "-n",
  NS,
  ...more,
];

/** The files `export -o dir` wrote for `plural`, as the AWS names they stand for (each a valid object name). */
const exported = (dir: string, plural: string): string[] => {
  try {
    return readdirSync(path.join(dir, plural))
      .map((f) => f.replace(/\.yaml$/, ""))
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
};

/**
 * Runs the command of its arguments with standard error on a pseudo-terminal and standard output
 * on its own; what the command wrote to the terminal comes out on standard error at the end.
 */
const ON_TERMINAL = `
import os, pty, subprocess, sys
primary, secondary = pty.openpty()
child = subprocess.Popen(sys.argv[1:], stderr=secondary)
os.close(secondary)
chunks = []
while True:
    try:
        chunk = os.read(primary, 65536)
    except OSError:  # EIO: the command has closed the terminal
        break
    if not chunk:
        break
    chunks.append(chunk)
sys.stderr.buffer.write(b"".join(chunks))
sys.exit(child.wait())
`;

describe("export --account and terminal progress", () => {
  const tenant = { bucket: `${PREFIX}-tenant-bucket`, queue: `${PREFIX}-tenant-queue` };
  const own = {
    bucket: `${PREFIX}-own-bucket`,
    queues: Array.from({ length: MORE_OWN_QUEUES + 1 }, (_, i) => `${PREFIX}-own-queue-${i}`).sort(),
  };
  const ownTotal = 1 + own.queues.length;

  before(async () => {
    const res = await env.cp.request("POST", "/apis/compute.cloud.com/v1/awsaccounts", {
      apiVersion: "compute.cloud.com/v1",
      kind: "AwsAccount",
      metadata: { name: "tenant" },
      spec: { roleArn: TENANT_ROLE },
    });
    assert.equal(res.status, 201, res.text);
    await Promise.all([
      seed(await tenantCredentials(), tenant.bucket, [tenant.queue]),
      seed({ accessKeyId: "testing", secretAccessKey: "testing" }, own.bucket, own.queues),
    ]);
    await waitFor(
      "AwsAccount tenant Ready, with its account as the operator resolved it",
      async () => {
        const a = (await env.cp.request("GET", "/apis/compute.cloud.com/v1/awsaccounts/tenant"))
          .body as AwsAccount;
        return (
          a.status?.accountId === TENANT_ACCOUNT &&
          a.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true
        );
      },
      WAIT_MS,
    );
  });

  it("exports the AwsAccount's resources with --account, and the operator's own without it", async () => {
    const withAccount = path.join(env.cp.dir, "export-tenant");
    const a = await run(process.execPath, exportArgs(["--account=tenant", "-o", withAccount]));
    assert.equal(a.code, 0, a.stderr);
    assert.deepEqual(exported(withAccount, "s3buckets"), [tenant.bucket]);
    assert.deepEqual(exported(withAccount, "sqsqueues"), [tenant.queue]);
    assert.match(a.stderr, /^export export: 2 written, 0 skipped, 0 failed$/m);

    const withoutAccount = path.join(env.cp.dir, "export-own");
    const b = await run(process.execPath, exportArgs(["-o", withoutAccount]));
    assert.equal(b.code, 0, b.stderr);
    assert.deepEqual(exported(withoutAccount, "s3buckets"), [own.bucket]);
    assert.deepEqual(exported(withoutAccount, "sqsqueues"), own.queues);
    assert.match(b.stderr, new RegExp(`^export export: ${ownTotal} written, 0 skipped, 0 failed$`, "m"));
    // Standard error was a pipe: no progress, though there were more than 50 resources.
    assert.doesNotMatch(b.stderr, /read \d+\/\d+/);
  });

  it("exits 1 naming an AwsAccount that does not exist, writing nothing", async () => {
    const res = await run(process.execPath, exportArgs(["--account=nosuch"]));
    assert.equal(res.code, 1);
    assert.equal(res.stdout, "");
    assert.equal(res.stderr, "kubeprovisioner export: there is no AwsAccount nosuch\n");
  });

  it("shows read N/M on a terminal, every 50 resources and at the end, apart from the manifests", async () => {
    const python = path.join(repoRoot, ".venv/bin/python");
    const res = await run(python, ["-c", ON_TERMINAL, process.execPath, ...exportArgs([])]);
    assert.equal(res.code, 0, res.stderr);
    const reads = [...res.stderr.matchAll(/read (\d+)\/(\d+)/g)].map((m) => `${m[1]}/${m[2]}`);
    assert.deepEqual(reads, [`50/${ownTotal}`, `${ownTotal}/${ownTotal}`], res.stderr);
    assert.match(
      res.stderr,
      new RegExp(`\\rread ${ownTotal}/${ownTotal}\\r?\\n`),
      "the last one ends its line",
    );
    assert.equal(res.stdout.match(/^kind: /gm)?.length, ownTotal, "every manifest on standard output");
    assert.doesNotMatch(res.stdout, /read \d+\/\d+/);
  });
});
