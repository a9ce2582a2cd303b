/**
 * What the S3Bucket integration tests share: a control plane, moto behind a counting proxy, the
 * operator as a child process (restartable), an S3 client talking to moto directly (the "out of
 * band" actor), and helpers that read objects, Events and metrics with deadlines.
 */
import assert from "node:assert/strict";
import {
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  HeadBucketCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { startAwsProxy, type AwsProxy } from "../support/aws-proxy.ts";
import { startControlPlane, type ControlPlane } from "../support/envtest.ts";
import { startMoto, type Moto } from "../support/moto.ts";
import { startOperator, type OperatorProcess } from "../support/operator.ts";
import { waitFor } from "../support/process.ts";

/** S3 operations that change something. */
export const S3_MUTATING = [
  "CreateBucket",
  "PutBucketTagging",
  "PutBucketVersioning",
  "DeleteBucket",
  "DeleteObjects",
  "DeleteObject",
];
/** HTTP methods of Kubernetes writes. */
export const WRITES = ["POST", "PUT", "PATCH", "DELETE"];

export interface Cond {
  type: string;
  status: string;
  reason: string;
  message: string;
}
export interface BucketObj {
  metadata: { resourceVersion: string; uid: string; generation: number; deletionTimestamp?: string };
  status?: {
    bucketArn?: string;
    endpoint?: string;
    region?: string;
    state?: string;
    createToken?: string;
    createAttempt?: number;
    conditions?: Cond[];
  };
}

/** The Ready condition of `o`. */
export const ready = (o: BucketObj | undefined): Cond | undefined =>
  o?.status?.conditions?.find((c) => c.type === "Ready");

/** A running environment for one test file. */
export class S3Env {
  cp!: ControlPlane;
  moto!: Moto;
  proxy!: AwsProxy;
  op!: OperatorProcess;
  readonly ns: string;
  readonly #clients = new Map<string, S3Client>();

  constructor(ns: string) {
    this.ns = ns;
  }

  get base(): string {
    return `/apis/compute.cloud.com/v1/namespaces/${this.ns}/s3buckets`;
  }

  async start(): Promise<void> {
    [this.cp, this.moto] = await Promise.all([startControlPlane({ installCRDs: true }), startMoto()]);
    this.proxy = await startAwsProxy(this.moto.endpoint);
    await this.cp.request("POST", "/api/v1/namespaces", { metadata: { name: this.ns } });
    await this.startOperator();
  }

  async startOperator(): Promise<void> {
    this.op = await startOperator({
      kubeconfig: this.cp.kubeconfigPath,
      awsEnv: { ...this.moto.env, AWS_ENDPOINT_URL: this.proxy.endpoint },
      dir: this.cp.dir,
      args: ["--leader-elect=false", "--poll-interval=2s"],
      name: `operator-${Date.now()}`,
    });
  }

  async stop(): Promise<void> {
    for (const c of this.#clients.values()) c.destroy();
    await this.op?.stop();
    await this.proxy?.stop();
    await this.moto?.stop();
    await this.cp?.stop();
  }

  /** An S3 client talking to moto directly, bypassing the proxy's counts. */
  s3(region = "us-east-1"): S3Client {
    let c = this.#clients.get(region);
    if (c === undefined) {
      c = new S3Client({
        region,
        endpoint: this.moto.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
      });
      this.#clients.set(region, c);
    }
    return c;
  }

  async create(name: string, spec: Record<string, unknown>): Promise<void> {
    const res = await this.cp.request("POST", this.base, {
      apiVersion: "compute.cloud.com/v1",
      kind: "S3Bucket",
      metadata: { name },
      spec: { bucketName: name, region: "us-east-1", ...spec },
    });
    assert.equal(res.status, 201, res.text);
  }

  async get(name: string): Promise<BucketObj | undefined> {
    const res = await this.cp.request("GET", `${this.base}/${name}`);
    if (res.status === 404) return undefined;
    assert.equal(res.status, 200, res.text);
    return res.body as BucketObj;
  }

  async patch(name: string, body: unknown): Promise<BucketObj> {
    const res = await this.cp.request("PATCH", `${this.base}/${name}`, body, "application/merge-patch+json");
    assert.equal(res.status, 200, res.text);
    return res.body as BucketObj;
  }

  async delete(name: string): Promise<void> {
    const res = await this.cp.request("DELETE", `${this.base}/${name}`);
    assert.ok(res.status === 200 || res.status === 202, res.text);
  }

  async waitUntil(
    name: string,
    what: string,
    pred: (o: BucketObj | undefined) => boolean,
    timeoutMs = 30_000,
  ): Promise<BucketObj | undefined> {
    let last: BucketObj | undefined;
    await waitFor(`${name}: ${what}`, async () => pred((last = await this.get(name))), timeoutMs, 150);
    return last;
  }

  async waitReady(name: string): Promise<BucketObj> {
    return (await this.waitUntil(name, "Ready=True", (o) => ready(o)?.status === "True")) as BucketObj;
  }

  async waitReason(name: string, reason: string): Promise<BucketObj> {
    return (await this.waitUntil(
      name,
      `Ready reason ${reason}`,
      (o) => ready(o)?.reason === reason,
    )) as BucketObj;
  }

  async events(name: string): Promise<{ type: string; reason: string; message: string }[]> {
    const res = await this.cp.request(
      "GET",
      `/api/v1/namespaces/${this.ns}/events?fieldSelector=involvedObject.name=${name}`,
    );
    return (res.body as { items: { type: string; reason: string; message: string }[] }).items;
  }

  async hasEvent(name: string, type: string, reason: string): Promise<boolean> {
    return (await this.events(name)).some((e) => e.type === type && e.reason === reason);
  }

  async waitEvent(name: string, type: string, reason: string): Promise<void> {
    await waitFor(`${name}: ${type} event ${reason}`, () => this.hasEvent(name, type, reason), 15_000, 150);
  }

  /** `controller_runtime_reconcile_total` of the s3bucket controller, optionally for one result. */
  reconciles(result?: string): Promise<number> {
    return this.op.metric("controller_runtime_reconcile_total", {
      controller: "s3bucket",
      ...(result !== undefined ? { result } : {}),
    });
  }

  /** Waits until the controller has reconciled at least `n` more times (with `result`, if given). */
  async waitReconciles(n: number, result?: string): Promise<void> {
    const start = await this.reconciles(result);
    await waitFor(
      `${n} more reconciles`,
      async () => (await this.reconciles(result)) >= start + n,
      30_000,
      100,
    );
  }

  /** Kubernetes writes made by the operator so far. */
  async kubeWrites(): Promise<number> {
    let n = 0;
    for (const method of WRITES) n += await this.op.metric("rest_client_requests_total", { method });
    return n;
  }

  mutations(): number[] {
    return S3_MUTATING.map((op) => this.proxy.count(op));
  }

  async bucketExists(name: string, region = "us-east-1"): Promise<boolean> {
    try {
      await this.s3(region).send(new HeadBucketCommand({ Bucket: name }));
      return true;
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
        return false;
      throw err;
    }
  }

  async bucketTags(name: string, region = "us-east-1"): Promise<Record<string, string>> {
    try {
      const out = await this.s3(region).send(new GetBucketTaggingCommand({ Bucket: name }));
      return Object.fromEntries((out.TagSet ?? []).map((t) => [t.Key ?? "", t.Value ?? ""]));
    } catch (err) {
      if ((err as Error).name === "NoSuchTagSet") return {};
      throw err;
    }
  }

  async versioning(name: string, region = "us-east-1"): Promise<string | undefined> {
    return (await this.s3(region).send(new GetBucketVersioningCommand({ Bucket: name }))).Status;
  }
}
