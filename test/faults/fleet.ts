/**
 * What every fault case shares: a real control plane with the CRDs, moto behind the fault-injecting
 * {@link AwsProxy}, operator processes started and killed at will, a fleet of objects of the three
 * kinds spread over several regions, and the checks that matter from outside: every object Ready
 * with exactly one AWS resource, no AWS resource without its object, nothing left after deletion.
 *
 * AWS is inspected straight at moto (not through the proxy, so no fault and no count), Kubernetes
 * through the admin client, never through the operator.
 */
import {
  DescribeInstancesCommand,
  EC2Client,
  TerminateInstancesCommand,
  type Instance,
} from "@aws-sdk/client-ec2";
import { GetBucketTaggingCommand, ListBucketsCommand, S3Client } from "@aws-sdk/client-s3";
import { ListQueueTagsCommand, ListQueuesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { KubeConfig } from "../../src/runtime/kube/kubeconfig.ts";
import { startAwsProxy, type AwsProxy } from "../support/aws-proxy.ts";
import { startBackends } from "../support/backends.ts";
import type { ControlPlane } from "../support/envtest.ts";
import type { Moto } from "../support/moto.ts";
import { inParallel } from "../support/pool.ts";
import { startOperator, type OperatorProcess } from "../support/operator.ts";
import { waitFor } from "../support/process.ts";
import { WRITES, ready, type KubeObj } from "../support/reconciler-env.ts";
import { CuttableProxy } from "../support/tcp-proxy.ts";
import { auditFlags, readAudit, type AuditEvent } from "../support/audit.ts";

/** The regions the fleet is spread over. */
export const REGIONS = ["us-east-1", "us-west-2", "eu-west-1"] as const;

/** The three kinds: plural, controller name, and a spec for object number `i`. */
export const KINDS = {
  Ec2Instance: {
    plural: "ec2instances",
    controller: "ec2instance",
    spec: (name: string, region: string) => ({
      instanceType: "t3.micro",
      amiId: "ami-1e749f67",
      region,
      tags: { fleet: "faults" },
    }),
  },
  S3Bucket: {
    plural: "s3buckets",
    controller: "s3bucket",
    spec: (name: string, region: string) => ({
      bucketName: name,
      region,
      versioning: true,
      tags: { fleet: "faults" },
    }),
  },
  SqsQueue: {
    plural: "sqsqueues",
    controller: "sqsqueue",
    spec: (name: string, region: string) => ({
      queueName: name,
      region,
      visibilityTimeoutSeconds: 45,
      tags: { fleet: "faults" },
    }),
  },
} as const;

export type Kind = keyof typeof KINDS;

/** One object of the fleet. */
export interface FleetObject {
  kind: Kind;
  name: string;
  region: string;
}

/** An object as listed (with its kind filled in). */
export type Listed = KubeObj & { metadata: { name: string; finalizers?: string[] } };

/** An AWS resource carrying ownership tags. */
export interface OwnedResource {
  kind: Kind;
  id: string;
  region: string;
  uid: string | undefined;
  /** EC2 only: the instance state. */
  state?: string;
}

/** Options of a {@link Fleet}. */
export interface FleetOptions {
  /** Extra kube-apiserver flags. */
  apiServerFlags?: string[];
  /** Put a {@link CuttableProxy} between the operators and the API server. */
  kubeProxy?: boolean;
  /** Have the API server write an audit log of every write ({@link Fleet.audit}). */
  auditLog?: boolean;
}

/** `count` objects, kinds in turn, regions in turn, names starting with `prefix`. */
export function plan(prefix: string, count: number): FleetObject[] {
  const kinds = Object.keys(KINDS) as Kind[];
  return Array.from({ length: count }, (_, i) => ({
    kind: kinds[i % kinds.length] as Kind,
    name: `${prefix}-${i}`,
    region: REGIONS[Math.floor(i / kinds.length) % REGIONS.length] as string,
  }));
}

/** The environment of one fault case. */
export class Fleet {
  cp!: ControlPlane;
  moto!: Moto;
  /** Every AWS call of the operators goes through it. */
  proxy!: AwsProxy;
  /** Between the operators and the API server, when asked for. */
  kubeProxy: CuttableProxy | undefined;
  readonly ns = "fleet";
  readonly #opts: FleetOptions;
  readonly #clients: { destroy(): void }[] = [];
  readonly #ec2 = new Map<string, EC2Client>();
  readonly #sqs = new Map<string, SQSClient>();
  #s3: S3Client | undefined;
  readonly operators: OperatorProcess[] = [];
  #starts = 0;
  #auditFile: string | undefined;

  constructor(opts: FleetOptions = {}) {
    this.#opts = opts;
  }

  async start(): Promise<void> {
    const audit = this.#opts.auditLog === true ? auditFlags() : undefined;
    this.#auditFile = audit?.file;
    // Without API server flags of its own the fleet leases a shared control plane.
    const apiServerFlags = [...(this.#opts.apiServerFlags ?? []), ...(audit?.flags ?? [])];
    ({ cp: this.cp, moto: this.moto } = await startBackends({
      installCRDs: true,
      ...(apiServerFlags.length > 0 ? { apiServerFlags } : {}),
    }));
    this.proxy = await startAwsProxy(this.moto.endpoint);
    if (this.#opts.kubeProxy === true) {
      this.kubeProxy = new CuttableProxy(new URL(this.cp.server));
      await this.kubeProxy.listen();
    }
    await this.cp.request("POST", "/api/v1/namespaces", { metadata: { name: this.ns } });
  }

  async stop(): Promise<void> {
    for (const c of this.#clients) c.destroy();
    await Promise.all(this.operators.map((o) => o.stop()));
    await this.kubeProxy?.cut();
    await this.proxy?.stop();
    await this.moto?.stop();
    await this.cp?.stop();
  }

  /**
   * A kubeconfig for an operator: the admin by default, or its own client-certificate user (in
   * system:masters) so the API server's audit log tells processes apart; through the kube proxy
   * when there is one.
   */
  kubeconfig(user: string | undefined, file: string): string {
    const kc = user !== undefined ? this.cp.userKubeConfig(user, ["system:masters"]) : this.cp.kubeConfig();
    if (this.kubeProxy !== undefined) {
      const url = this.kubeProxy.url;
      const doc = kc.document;
      const moved = KubeConfig.fromDocument({
        ...doc,
        clusters: (doc.clusters ?? []).map((c) => ({ ...c, cluster: { ...c.cluster, server: url } })),
      });
      return this.cp.writeKubeConfig(moved, file);
    }
    return this.cp.writeKubeConfig(kc, file);
  }

  /** Starts an operator process (AWS through the proxy); `user` names its client identity. */
  async startOperator(args: string[], user?: string): Promise<OperatorProcess> {
    const name = user ?? `operator-${++this.#starts}`;
    const op = await startOperator({
      kubeconfig: this.kubeconfig(user, name),
      env: { ...this.moto.env, AWS_ENDPOINT_URL: this.proxy.endpoint },
      dir: this.cp.dir,
      name,
      args: ["--log-level=info", ...args],
    });
    this.operators.push(op);
    return op;
  }

  /** The API server's audit log so far (with {@link FleetOptions.auditLog}). */
  auditLog(): AuditEvent[] {
    if (this.#auditFile === undefined) throw new Error("the fleet was started without an audit log");
    return readAudit(this.#auditFile);
  }

  /** Collection path of `kind` in the fleet's namespace. */
  path(kind: Kind, name?: string): string {
    const base = `/apis/compute.cloud.com/v1/namespaces/${this.ns}/${KINDS[kind].plural}`;
    return name === undefined ? base : `${base}/${name}`;
  }

  /** Creates `o` (retrying while the API server is unreachable). */
  async create(o: FleetObject): Promise<void> {
    const res = await this.cp.request("POST", this.path(o.kind), {
      apiVersion: "compute.cloud.com/v1",
      kind: o.kind,
      metadata: { name: o.name },
      spec: KINDS[o.kind].spec(o.name, o.region),
    });
    if (res.status !== 201) throw new Error(`creating ${o.kind} ${o.name}: ${res.status} ${res.text}`);
  }

  async createAll(objs: readonly FleetObject[], width = 8): Promise<void> {
    await inParallel(objs, width, (o) => this.create(o));
  }

  async delete(o: FleetObject): Promise<void> {
    const res = await this.cp.request("DELETE", this.path(o.kind, o.name));
    if (res.status !== 200 && res.status !== 202 && res.status !== 404)
      throw new Error(`deleting ${o.kind} ${o.name}: ${res.status} ${res.text}`);
  }

  async deleteAll(objs: readonly FleetObject[], width = 8): Promise<void> {
    await inParallel(objs, width, (o) => this.delete(o));
  }

  /** A JSON merge patch of `o`'s spec. */
  async patchSpec(o: FleetObject, spec: Record<string, unknown>): Promise<void> {
    const res = await this.cp.request(
      "PATCH",
      this.path(o.kind, o.name),
      { spec },
      "application/merge-patch+json",
    );
    if (res.status !== 200) throw new Error(`patching ${o.kind} ${o.name}: ${res.status} ${res.text}`);
  }

  /** Every object of the three kinds in the namespace. */
  async list(): Promise<Listed[]> {
    const out: Listed[] = [];
    for (const kind of Object.keys(KINDS) as Kind[]) {
      const res = await this.cp.request("GET", this.path(kind));
      if (res.status !== 200) throw new Error(`listing ${kind}: ${res.status} ${res.text}`);
      for (const item of (res.body as { items: Listed[] }).items) out.push({ ...item, kind } as Listed);
    }
    return out;
  }

  /** Waits until every object in `objs` is Ready=True at its current generation; returns the time it took. */
  async waitReady(objs: readonly FleetObject[], timeoutMs: number): Promise<number> {
    const t0 = performance.now();
    const want = new Set(objs.map((o) => `${o.kind}/${o.name}`));
    let missing = want.size;
    await waitFor(
      `${want.size} objects Ready`,
      async () => {
        const live = await this.list();
        const good = live.filter(
          (o) =>
            want.has(`${o.kind}/${o.metadata.name}`) &&
            ready(o)?.status === "True" &&
            o.status?.observedGeneration === o.metadata.generation,
        );
        missing = want.size - good.length;
        return missing === 0;
      },
      timeoutMs,
      500,
    ).catch((err: unknown) => {
      throw new Error(`${missing} of ${want.size} objects not Ready`, { cause: err });
    });
    return performance.now() - t0;
  }

  /** Waits until none of `objs` exists any more. */
  async waitNoneOf(objs: readonly FleetObject[], timeoutMs: number): Promise<void> {
    const names = new Set(objs.map((o) => `${o.kind}/${o.name}`));
    let left = 0;
    await waitFor(
      `${names.size} objects gone`,
      async () => {
        left = (await this.list()).filter((o) => names.has(`${o.kind}/${o.metadata.name}`)).length;
        return left === 0;
      },
      timeoutMs,
      500,
    ).catch((err: unknown) => {
      throw new Error(`${left} of ${names.size} deleted objects still there`, { cause: err });
    });
  }

  /** Waits until none of the fleet's objects exists; returns the time it took. */
  async waitNoObjects(timeoutMs: number): Promise<number> {
    const t0 = performance.now();
    let left = 0;
    await waitFor(
      "every object gone",
      async () => {
        left = (await this.list()).length;
        return left === 0;
      },
      timeoutMs,
      500,
    ).catch((err: unknown) => {
      throw new Error(`${left} objects still there`, { cause: err });
    });
    return performance.now() - t0;
  }

  #ec2Client(region: string): EC2Client {
    let c = this.#ec2.get(region);
    if (c === undefined) {
      c = new EC2Client({ region, endpoint: this.moto.endpoint, credentials: CREDS });
      this.#ec2.set(region, c);
      this.#clients.push(c);
    }
    return c;
  }

  #sqsClient(region: string): SQSClient {
    let c = this.#sqs.get(region);
    if (c === undefined) {
      c = new SQSClient({ region, endpoint: this.moto.endpoint, credentials: CREDS });
      this.#sqs.set(region, c);
      this.#clients.push(c);
    }
    return c;
  }

  s3Client(): S3Client {
    if (this.#s3 === undefined) {
      this.#s3 = new S3Client({
        region: "us-east-1",
        endpoint: this.moto.endpoint,
        credentials: CREDS,
        forcePathStyle: true,
      });
      this.#clients.push(this.#s3);
    }
    return this.#s3;
  }

  ec2(region: string): EC2Client {
    return this.#ec2Client(region);
  }

  sqs(region: string): SQSClient {
    return this.#sqsClient(region);
  }

  /**
   * Every AWS resource carrying the operator's ownership tags (terminated instances included),
   * read from moto directly.
   */
  async inventory(): Promise<OwnedResource[]> {
    const out: OwnedResource[] = [];
    for (const region of REGIONS) {
      const instances: Instance[] = [];
      let token: string | undefined;
      do {
        const page = await this.#ec2Client(region).send(
          new DescribeInstancesCommand({
            Filters: [{ Name: "tag-key", Values: [OWNERSHIP_TAGS.uid] }],
            ...(token !== undefined ? { NextToken: token } : {}),
          }),
        );
        for (const r of page.Reservations ?? []) instances.push(...(r.Instances ?? []));
        token = page.NextToken;
      } while (token !== undefined);
      for (const i of instances) {
        out.push({
          kind: "Ec2Instance",
          id: i.InstanceId ?? "",
          region,
          uid: i.Tags?.find((t) => t.Key === OWNERSHIP_TAGS.uid)?.Value,
          ...(i.State?.Name !== undefined ? { state: i.State.Name } : {}),
        });
      }
      const queues = await this.#sqsClient(region).send(new ListQueuesCommand({ MaxResults: 1000 }));
      for (const url of queues.QueueUrls ?? []) {
        const tags = await this.#sqsClient(region)
          .send(new ListQueueTagsCommand({ QueueUrl: url }))
          .catch(() => ({ Tags: undefined }));
        out.push({ kind: "SqsQueue", id: url, region, uid: tags.Tags?.[OWNERSHIP_TAGS.uid] });
      }
    }
    const buckets = await this.s3Client().send(new ListBucketsCommand({}));
    for (const b of buckets.Buckets ?? []) {
      const tags = await this.s3Client()
        .send(new GetBucketTaggingCommand({ Bucket: b.Name }))
        .catch(() => ({ TagSet: [] }));
      out.push({
        kind: "S3Bucket",
        id: b.Name ?? "",
        region: b.BucketRegion ?? "",
        uid: tags.TagSet?.find((t) => t.Key === OWNERSHIP_TAGS.uid)?.Value,
      });
    }
    return out;
  }

  /**
   * The one-to-one check: for each object, its live AWS resources and all it ever had (EC2
   * instances are listed for a while after termination); and the live resources whose object
   * does not exist.
   */
  async census(): Promise<{
    objects: number;
    notReady: string[];
    duplicates: string[];
    missing: string[];
    orphans: string[];
  }> {
    const [objs, inv] = [await this.list(), await this.inventory()];
    const live = inv.filter(
      (r) => r.state === undefined || (r.state !== "terminated" && r.state !== "shutting-down"),
    );
    const byUid = new Map<string, OwnedResource[]>();
    for (const r of inv) if (r.uid !== undefined) byUid.set(r.uid, [...(byUid.get(r.uid) ?? []), r]);
    const uids = new Set(objs.map((o) => o.metadata.uid));
    const notReady: string[] = [];
    const duplicates: string[] = [];
    const missing: string[] = [];
    for (const o of objs) {
      const label = `${o.kind}/${o.metadata.name}`;
      if (ready(o)?.status !== "True") notReady.push(label);
      const all = byUid.get(o.metadata.uid) ?? [];
      const mine = all.filter((r) => live.includes(r));
      if (mine.length === 0) missing.push(label);
      if (all.length > 1)
        duplicates.push(`${label}: ${all.map((r) => `${r.id}(${r.state ?? "live"})`).join(", ")}`);
    }
    const orphans = live
      .filter((r) => r.uid === undefined || !uids.has(r.uid))
      .map((r) => `${r.kind} ${r.id}`);
    return { objects: objs.length, notReady, duplicates, missing, orphans };
  }

  /** Live AWS resources with ownership tags (instances not terminated). */
  async liveResources(): Promise<OwnedResource[]> {
    return (await this.inventory()).filter(
      (r) => r.state === undefined || (r.state !== "terminated" && r.state !== "shutting-down"),
    );
  }

  /** Terminates an instance out of band (drift). */
  async terminate(region: string, id: string): Promise<void> {
    await this.#ec2Client(region).send(new TerminateInstancesCommand({ InstanceIds: [id] }));
  }

  /** Sum of metric `name` over the given operators (every started one by default). */
  async metric(
    name: string,
    labels: Record<string, string> = {},
    ops: readonly OperatorProcess[] = this.operators.filter((o) => o.process.proc.exitCode === null),
  ): Promise<number> {
    let sum = 0;
    for (const op of ops) sum += await op.metric(name, labels).catch(() => 0);
    return sum;
  }

  /** Kubernetes writes made by `op` so far. */
  async kubeWrites(op: OperatorProcess): Promise<number> {
    let n = 0;
    for (const method of WRITES) n += await op.metric("rest_client_requests_total", { method });
    return n;
  }
}

const CREDS = { accessKeyId: "testing", secretAccessKey: "testing" };

/** Objects' resourceVersions by kind/name: compared before and after a window, the objects written. */
export async function versions(fleet: Fleet): Promise<Map<string, string>> {
  return new Map(
    (await fleet.list()).map((o) => [`${o.kind}/${o.metadata.name}`, o.metadata.resourceVersion]),
  );
}

/** How many objects changed between two {@link versions} snapshots. */
export function changed(before: Map<string, string>, after: Map<string, string>): number {
  let n = 0;
  for (const [k, v] of after) if (before.get(k) !== v) n += 1;
  return n;
}
