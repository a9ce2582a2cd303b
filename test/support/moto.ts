/**
 * An AWS emulator for tests: the test AWS (test/support/aws-emulator/server.py: moto's server
 * with the wraps that make it answer as AWS does, test/README.md) on a loopback port it binds
 * itself (port 0: the kernel picks a free one, and the server logs which, so no other process can
 * take the port between choosing and binding it), run by the project virtualenv's python; or the
 * endpoint in AWS_ENDPOINT_URL when that is set (then nothing is started).
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { removeTempDir, repoRoot, startProcess, trackTempDir, waitFor, type Supervised } from "./process.ts";

/** The test AWS's entry point. */
const EMULATOR = path.join(repoRoot, "test/support/aws-emulator/server.py");

/** A running emulator. */
export interface Moto {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** Environment for an AWS SDK client or a child process using this emulator. */
  readonly env: Record<string, string>;
  /** Clears every resource in the emulator (moto's reset API). */
  reset(): Promise<void>;
  /** Creates the IAM instance profile `name` (what an Ec2Instance's iamInstanceProfile names). */
  createInstanceProfile(name: string): Promise<void>;
  /** Creates a KMS key (what an Ec2Instance volume's kmsKeyId names): its key ID and ARN. */
  createKmsKey(): Promise<{ keyId: string; arn: string }>;
  /** Stops the emulator if this process started it. */
  stop(): Promise<void>;
}

function envFor(endpoint: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? "testing",
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? "testing",
    AWS_REGION: process.env.AWS_REGION ?? "us-east-1",
    AWS_EC2_METADATA_DISABLED: "true",
  };
}

/**
 * IAM CreateInstanceProfile through IAM's query API; moto routes by the credential scope of the
 * Authorization header and does not check the signature. An existing profile is fine.
 */
async function createInstanceProfile(endpoint: string, name: string): Promise<void> {
  const res = await fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization:
        "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0",
    },
    body: new URLSearchParams({
      Action: "CreateInstanceProfile",
      InstanceProfileName: name,
      Version: "2010-05-08",
    }),
  });
  const text = await res.text();
  if (res.status !== 200 && !text.includes("EntityAlreadyExists"))
    throw new Error(`CreateInstanceProfile ${name}: HTTP ${res.status} ${text}`);
}

/** KMS CreateKey through KMS's JSON API, routed and unsigned as {@link createInstanceProfile}. */
async function createKmsKey(endpoint: string): Promise<{ keyId: string; arn: string }> {
  const res = await fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/x-amz-json-1.1",
      "x-amz-target": "TrentService.CreateKey",
      authorization:
        "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/kms/aws4_request, SignedHeaders=host, Signature=0",
    },
    body: JSON.stringify({ Description: "test volumes" }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`CreateKey: HTTP ${res.status} ${text}`);
  const meta = (JSON.parse(text) as { KeyMetadata?: { KeyId?: string; Arn?: string } }).KeyMetadata;
  if (meta?.KeyId === undefined || meta.Arn === undefined) throw new Error(`CreateKey: ${text}`);
  return { keyId: meta.KeyId, arn: meta.Arn };
}

/** The emulator serving at `endpoint`, which `stop` stops (or leaves running, if it is not ours). */
export function motoAt(endpoint: string, stop: () => Promise<void>): Moto {
  return {
    endpoint,
    env: envFor(endpoint),
    async reset() {
      const res = await fetch(`${endpoint}/moto-api/reset`, { method: "POST" });
      if (!res.ok) throw new Error(`moto reset: HTTP ${res.status}`);
    },
    createInstanceProfile: (name) => createInstanceProfile(endpoint, name),
    createKmsKey: () => createKmsKey(endpoint),
    stop,
  };
}

/**
 * Starts moto (or attaches to AWS_ENDPOINT_URL, unless `own`: then always starts one of this
 * process's own, as a file that changes the emulator's global settings must) and waits until it
 * answers.
 */
export async function startMoto(
  opts: { startTimeoutMs?: number; host?: string; own?: boolean } = {},
): Promise<Moto> {
  const external = process.env.AWS_ENDPOINT_URL;
  if (external && opts.own !== true) return motoAt(external, async () => {});
  const python = path.join(repoRoot, ".venv/bin/python");
  if (!existsSync(python)) throw new Error(`${python} not found; run 'make tools'`);
  const dir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-moto-"));
  trackTempDir(dir);
  // A cluster's pods reach moto at the host's address on the node's link.
  const host = opts.host ?? "127.0.0.1";
  const logFile = path.join(dir, "moto.log");
  const proc: Supervised = startProcess(python, [EMULATOR, "-H", host, "-p", "0"], {
    logFile,
    env: process.env,
  });
  let endpoint = "";
  try {
    await waitFor(
      "moto",
      async () => {
        if (proc.proc.exitCode !== null) throw new Error(`moto exited; see ${proc.logFile}`);
        // The server's start line names the port it bound: " * Running on http://<host>:<port>".
        const port = /Running on http:\/\/\S+?:(\d+)/.exec(readFileSync(logFile, "utf8"))?.[1];
        if (port === undefined) return false;
        endpoint = `http://${host}:${port}`;
        return (await fetch(`${endpoint}/moto-api/data.json`)).ok;
      },
      // Generous: moto imports every service at start, and test files start at once.
      opts.startTimeoutMs ?? 120_000,
      100,
    );
  } catch (err) {
    await proc.stop();
    removeTempDir(dir);
    throw err;
  }
  let stopped = false;
  return motoAt(endpoint, async () => {
    if (stopped) return;
    stopped = true;
    await proc.stop();
    removeTempDir(dir);
  });
}
