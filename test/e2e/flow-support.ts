/**
 * Small pieces of the helm end-to-end flow: the samples of config/samples, AWS clients on moto,
 * an HTTPS scrape of /metrics, and failure messages that carry the operator's log.
 */
import { EC2Client } from "@aws-sdk/client-ec2";
import { S3Client } from "@aws-sdk/client-s3";
import { SQSClient } from "@aws-sdk/client-sqs";
import { readdirSync, readFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import path from "node:path";
import { parse } from "yaml";
import type { Moto } from "../support/moto.ts";
import { repoRoot } from "../support/process.ts";
import type { Manifest } from "./helm.ts";

/** One object of config/samples and the file it is in. */
export type Sample = Manifest & { spec: Record<string, unknown>; file: string };

/** Every sample (kustomization.yaml excluded), read afresh. */
export function samples(): Sample[] {
  const dir = path.join(repoRoot, "config/samples");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
    .map((f) => ({ ...(parse(readFileSync(path.join(dir, f), "utf8")) as Sample), file: path.join(dir, f) }));
}

/** The (first) sample of `kind`, or the one named `name`; throws when config/samples has none. */
export function sampleOf(kind: string, name?: string): Sample {
  const s = samples().find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  if (s === undefined)
    throw new Error(`config/samples has no ${kind}${name !== undefined ? ` ${name}` : ""}`);
  return s;
}

/** `kind/name` arguments for kubectl, one per sample. */
export function sampleRefs(): string[] {
  return samples().map((s) => `${s.kind.toLowerCase()}/${s.metadata.name}`);
}

/** SDK clients on moto in us-east-1; `destroy()` closes them. */
export function motoClients(moto: Moto): { s3: S3Client; sqs: SQSClient; ec2: EC2Client; destroy(): void } {
  const cfg = {
    region: "us-east-1",
    endpoint: moto.endpoint,
    credentials: {
      accessKeyId: moto.env.AWS_ACCESS_KEY_ID ?? "testing",
      secretAccessKey: moto.env.AWS_SECRET_ACCESS_KEY ?? "testing",
    },
  };
  const s3 = new S3Client({ ...cfg, forcePathStyle: true });
  const sqs = new SQSClient(cfg);
  const ec2 = new EC2Client(cfg);
  return {
    s3,
    sqs,
    ec2,
    destroy() {
      s3.destroy();
      sqs.destroy();
      ec2.destroy();
    },
  };
}

/** GET over HTTPS without verifying the (self-signed) certificate. */
export function scrape(url: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
    const req = httpsRequest(url, { rejectUnauthorized: false, headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * Wraps a step so that its failure message ends with the last lines of the operator's log, where
 * the cause usually is. `logFile()` is asked at failure time (undefined: not started yet).
 */
export function withOperatorLog(logFile: () => string | undefined): <T>(p: Promise<T>) => Promise<T> {
  return async <T>(p: Promise<T>): Promise<T> => {
    try {
      return await p;
    } catch (err) {
      const file = logFile();
      let tail = "(operator not started)";
      if (file !== undefined) {
        try {
          tail = readFileSync(file, "utf8").trimEnd().split("\n").slice(-40).join("\n");
        } catch {
          tail = "(no operator log)";
        }
      }
      throw new Error(
        `${(err as Error).message}\n--- operator log (tail; KP_E2E_KEEP=1 keeps it all)\n${tail}`,
        { cause: err },
      );
    }
  };
}
