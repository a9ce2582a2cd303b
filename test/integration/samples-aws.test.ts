/**
 * config/samples-aws, the samples for real AWS, as docs/install.md#check-it has users apply them:
 * the documented command writes settings.env, kubectl's own kustomize builds the folder, and a
 * real kube-apiserver with the generated CRDs admits every object (`kubectl apply -k`). The
 * names the objects give AWS are derived from the namespace and a random suffix, are valid S3
 * and SQS names, and never the same for two namespaces or two suffixes; nothing names what only
 * the emulator or one account has.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { repoRoot } from "../support/process.ts";
import {
  checkoutOf,
  exampleSettings,
  parseEnvFile,
  samplesAwsCopy,
  SETTINGS_FILE,
  type SamplesAwsSettings,
} from "../support/samples-aws.ts";
import { toolPath } from "../support/tools.ts";

const execFileP = promisify(execFile);

interface Sample {
  apiVersion: string;
  kind: "Ec2Instance" | "S3Bucket" | "SqsQueue";
  metadata: { name: string; namespace?: string };
  spec: Record<string, unknown> & { policy?: { Statement: { Resource: string[] }[] } };
}

/** `kubectl kustomize dir`: the objects, or the error kubectl printed. */
async function build(dir: string): Promise<Sample[]> {
  const { stdout } = await execFileP(toolPath("kubectl"), ["kustomize", dir]);
  return parseAllDocuments(stdout).map((d) => d.toJS() as Sample);
}

/** The AWS names a built sample set gives AWS: bucket and queue names. */
function awsNames(objects: readonly Sample[]): string[] {
  return objects.flatMap((o) =>
    [o.spec["bucketName"], o.spec["queueName"]].filter((n): n is string => typeof n === "string"),
  );
}

/** S3's naming rules for general purpose buckets that a derived name could break. */
function bucketNameProblems(name: string): string[] {
  const out: string[] = [];
  if (name.length < 3 || name.length > 63) out.push(`${name}: ${name.length} characters, not 3-63`);
  if (!/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/.test(name))
    out.push(`${name}: not lowercase letters, digits, . and -`);
  if (name.includes("..")) out.push(`${name}: two adjacent periods`);
  if (/^(xn--|sthree-|amzn-s3-demo-)/.test(name)) out.push(`${name}: reserved prefix`);
  if (/(-s3alias|--ol-s3|\.mrap|--x-s3|--table-s3)$/.test(name)) out.push(`${name}: reserved suffix`);
  return out;
}

/** The pages users read, and the shell lines in each that write settings.env (`cat >` to `EOF`). */
function documentedSettingsCommands(): { page: string; command: string }[] {
  const pages = ["README.md", ...readdirSync(path.join(repoRoot, "docs")).map((f) => `docs/${f}`)];
  const out = pages.flatMap((page) =>
    [
      ...readFileSync(path.join(repoRoot, page), "utf8").matchAll(
        /^cat > config\/samples-aws\/settings\.env <<EOF\n[\s\S]*?^EOF$/gm,
      ),
    ].map((m) => ({ page, command: m[0] })),
  );
  assert.ok(
    out.some((c) => c.page === "docs/install.md"),
    "docs/install.md writes config/samples-aws/settings.env with a heredoc",
  );
  return out;
}

const settings = (s: SamplesAwsSettings): SamplesAwsSettings => s;

describe("config/samples-aws, the samples for real AWS", () => {
  let cp: ControlPlane;

  before(async () => {
    cp = await startControlPlane({ installCRDs: true });
  });
  after(async () => {
    await cp?.stop();
  });

  it("does not build without settings.env, and the error names the file", async () => {
    await assert.rejects(build(samplesAwsCopy()), (err: Error & { stderr?: string }) => {
      assert.match(err.stderr ?? "", /settings\.env/);
      return true;
    });
  });

  it("gets its settings from the documented commands: the four keys, a random suffix", async () => {
    for (const { page, command } of documentedSettingsCommands()) {
      const suffixes = new Set<string>();
      for (let i = 0; i < 2; i++) {
        const copy = samplesAwsCopy();
        await execFileP("bash", ["-euc", command], {
          cwd: checkoutOf(copy),
          env: { ...process.env, REGION: "eu-west-1", AMI: "ami-0123456789abcdef0" },
        });
        const written = parseEnvFile(readFileSync(path.join(copy, SETTINGS_FILE), "utf8"));
        assert.deepEqual(Object.keys(written).sort(), Object.keys(exampleSettings()).sort(), page);
        assert.equal(written["region"], "eu-west-1", page);
        assert.equal(written["amiId"], "ami-0123456789abcdef0", page);
        assert.match(written["suffix"] ?? "", /^[0-9a-f]{8}$/, page);
        suffixes.add(written["suffix"] ?? "");
        assert.equal((await build(copy)).length, 4, page);
      }
      assert.equal(suffixes.size, 2, `${page}: each run draws a new suffix`);
    }
  });

  it("derives every AWS name from the namespace and the suffix, as valid S3 and SQS names", async () => {
    const s = settings({
      namespace: "team-a",
      region: "eu-west-1",
      amiId: "ami-0123456789abcdef0",
      suffix: "1a2b3c4d",
    });
    const objects = await build(samplesAwsCopy({ ...s }));
    assert.deepEqual(
      objects.map((o) => `${o.kind}/${o.metadata.name}`),
      ["Ec2Instance/web-server", "S3Bucket/vault", "SqsQueue/jobs", "SqsQueue/jobs-dlq"],
      "the settings ConfigMap is local to kustomize and not among the objects",
    );
    for (const o of objects) {
      assert.equal(o.metadata.namespace, "team-a", `${o.metadata.name}: namespace`);
      assert.equal(o.spec["region"], "eu-west-1", `${o.metadata.name}: region`);
    }
    const byName = new Map(objects.map((o) => [o.metadata.name, o]));
    assert.equal(byName.get("web-server")?.spec["amiId"], "ami-0123456789abcdef0");
    const vault = byName.get("vault");
    assert.equal(vault?.spec["bucketName"], "kubeprovisioner-team-a-vault-1a2b3c4d");
    assert.deepEqual(bucketNameProblems(String(vault?.spec["bucketName"])), []);
    assert.deepEqual(vault?.spec.policy?.Statement[0]?.Resource, [
      "arn:aws:s3:::kubeprovisioner-team-a-vault-1a2b3c4d",
      "arn:aws:s3:::kubeprovisioner-team-a-vault-1a2b3c4d/*",
    ]);
    assert.equal(byName.get("jobs")?.spec["queueName"], "kubeprovisioner-team-a-jobs-1a2b3c4d");
    assert.equal(byName.get("jobs-dlq")?.spec["queueName"], "kubeprovisioner-team-a-jobs-dlq-1a2b3c4d");
    for (const q of ["jobs", "jobs-dlq"])
      assert.match(String(byName.get(q)?.spec["queueName"]), /^[A-Za-z0-9_-]{1,80}$/);

    // Nothing that exists only in the emulator or in one account: no instance profile, key pair,
    // subnet, security group or role, and no account ID anywhere.
    for (const o of objects) {
      for (const field of ["iamInstanceProfile", "keyPair", "subnet", "securityGroups", "replication"])
        assert.equal(o.spec[field], undefined, `${o.metadata.name}: ${field}`);
      assert.doesNotMatch(JSON.stringify(o), /\d{12}|:role\//, `${o.metadata.name} names an account or role`);
    }

    // Another namespace or another suffix: no AWS name in common.
    const other = await build(samplesAwsCopy({ ...s, namespace: "team-b" }));
    const again = await build(samplesAwsCopy({ ...s, suffix: "9f8e7d6c" }));
    for (const names of [awsNames(other), awsNames(again)])
      assert.deepEqual(
        names.filter((n) => awsNames(objects).includes(n)),
        [],
      );
  });

  it("is admitted by the API server once filled in, and refused while it holds the placeholders", async () => {
    const ns = "samples-aws";
    await cp.kubectl(["create", "namespace", ns]);

    // The committed placeholders: admission refuses every object, naming each field.
    const placeholders = samplesAwsCopy({ ...exampleSettings(), namespace: ns });
    const refused = await cp.kubectl(["apply", "--dry-run=server", "-k", placeholders]).then(
      () => "",
      (err: Error & { stderr?: string }) => err.stderr ?? err.message,
    );
    for (const [object, field] of [
      ["web-server", "spec.amiId"],
      ["web-server", "spec.region"],
      ["vault", "spec.bucketName"],
      ["jobs", "spec.region"],
    ] as const)
      assert.match(
        refused,
        new RegExp(`${object}[^\\n]*${field.replace(".", "\\.")}`),
        `${object}: ${field}`,
      );

    const copy = samplesAwsCopy({
      namespace: ns,
      region: "us-west-2",
      amiId: "ami-0abcdef1234567890",
      suffix: "0f1e2d3c",
    });
    const applied = await cp.kubectl(["apply", "-k", copy]);
    for (const o of ["ec2instance/web-server", "s3bucket/vault", "sqsqueue/jobs", "sqsqueue/jobs-dlq"])
      assert.match(applied.stdout, new RegExp(`${o.replace("/", "\\.compute\\.cloud\\.com/")} created`));
    const got = await cp.kubectl(["get", "-n", ns, "s3b", "vault", "-o", "jsonpath={.spec.bucketName}"]);
    assert.equal(got.stdout, `kubeprovisioner-${ns}-vault-0f1e2d3c`);
    const configMaps = await cp.kubectl(["get", "-n", ns, "configmaps", "-o", "name"]);
    assert.doesNotMatch(configMaps.stdout, /samples-aws-settings/, "the settings stay local to kustomize");
  });

  it("fits a namespace of up to 32 characters with an 8-character suffix into a bucket name", async () => {
    const ns = "a".repeat(31) + "z";
    await cp.kubectl(["create", "namespace", ns]);
    const s = { namespace: ns, region: "us-west-2", amiId: "ami-0abcdef1234567890", suffix: "0f1e2d3c" };
    const objects = await build(samplesAwsCopy(s));
    const bucket = objects.find((o) => o.kind === "S3Bucket")?.spec["bucketName"];
    assert.equal(String(bucket).length, 63);
    assert.deepEqual(bucketNameProblems(String(bucket)), []);
    await cp.kubectl(["apply", "--dry-run=server", "-k", samplesAwsCopy(s)]);

    // One character more and S3's limit is passed: admission says so.
    const longer = { ...s, namespace: `${ns}b` };
    await cp.kubectl(["create", "namespace", longer.namespace]);
    const refused = await cp.kubectl(["apply", "--dry-run=server", "-k", samplesAwsCopy(longer)]).then(
      () => "",
      (err: Error & { stderr?: string }) => err.stderr ?? err.message,
    );
    assert.match(refused, /spec\.bucketName: Too long: may not be more than 63/);
  });
});
