/**
 * Shared helpers of the Ec2Instance integration tests: object CRUD and polling through the test
 * API server, instance lookups straight at moto (not through the counting proxy), Events, and
 * the operator's reconcile counter.
 */
import assert from "node:assert/strict";
import { DescribeInstancesCommand, EC2Client, type Instance, type Tag } from "@aws-sdk/client-ec2";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import type { ControlPlane } from "../support/envtest.ts";
import type { Moto } from "../support/moto.ts";
import type { OperatorProcess } from "../support/operator.ts";
import { waitFor } from "../support/process.ts";

/** AWS operations that change EC2 state; a no-op reconcile makes none of them. */
export const MUTATING_EC2 = ["RunInstances", "CreateTags", "DeleteTags", "TerminateInstances"];

/** A condition as served. */
export interface Cond {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** The parts of an Ec2Instance the tests read. */
export interface Ec2Obj {
  metadata: { resourceVersion: string; uid: string; generation?: number };
  status?: {
    instanceId?: string;
    state?: string;
    publicIP?: string;
    privateIP?: string;
    publicDNS?: string;
    privateDNS?: string;
    launchTime?: string;
    createToken?: string;
    createAttempt?: number;
    observedGeneration?: number;
    conditions?: Cond[];
  };
}

/** EC2 tags as a map. */
export function tagMap(tags: readonly Tag[] | undefined): Record<string, string> {
  return Object.fromEntries((tags ?? []).map((t) => [t.Key ?? "", t.Value ?? ""]));
}

/** Helpers bound to one control plane, emulator, namespace and operator. */
export class Ec2Fixture {
  readonly base: string;
  readonly #cp: ControlPlane;
  readonly #moto: Moto;
  readonly #ns: string;
  readonly #op: () => OperatorProcess;
  readonly #clients = new Map<string, EC2Client>();

  constructor(cp: ControlPlane, moto: Moto, ns: string, op: () => OperatorProcess) {
    this.#cp = cp;
    this.#moto = moto;
    this.#ns = ns;
    this.#op = op;
    this.base = `/apis/compute.cloud.com/v1/namespaces/${ns}/ec2instances`;
  }

  /** An EC2 client talking to moto directly, so its calls are not counted by the proxy. */
  ec2(region = "us-east-1"): EC2Client {
    let c = this.#clients.get(region);
    if (c === undefined) {
      c = new EC2Client({
        region,
        endpoint: this.#moto.endpoint,
        credentials: { accessKeyId: "t", secretAccessKey: "t" },
      });
      this.#clients.set(region, c);
    }
    return c;
  }

  destroy(): void {
    for (const c of this.#clients.values()) c.destroy();
  }

  async create(name: string, spec: Record<string, unknown> = {}): Promise<Ec2Obj> {
    const res = await this.#cp.request("POST", this.base, {
      apiVersion: "compute.cloud.com/v1",
      kind: "Ec2Instance",
      metadata: { name },
      spec: { instanceType: "t3.micro", amiId: "ami-1e749f67", region: "us-east-1", ...spec },
    });
    assert.equal(res.status, 201, res.text);
    return res.body as Ec2Obj;
  }

  async get(name: string): Promise<Ec2Obj | undefined> {
    const res = await this.#cp.request("GET", `${this.base}/${name}`);
    if (res.status === 404) return undefined;
    assert.equal(res.status, 200, res.text);
    return res.body as Ec2Obj;
  }

  async patch(name: string, body: unknown): Promise<Ec2Obj> {
    const res = await this.#cp.request("PATCH", `${this.base}/${name}`, body, "application/merge-patch+json");
    assert.equal(res.status, 200, res.text);
    return res.body as Ec2Obj;
  }

  ready(o: Ec2Obj | undefined): Cond | undefined {
    return o?.status?.conditions?.find((c) => c.type === "Ready");
  }

  async waitUntil(
    name: string,
    what: string,
    pred: (o: Ec2Obj | undefined) => boolean,
    timeoutMs = 30_000,
  ): Promise<Ec2Obj | undefined> {
    let last: Ec2Obj | undefined;
    await waitFor(`${name}: ${what}`, async () => pred((last = await this.get(name))), timeoutMs, 150);
    return last;
  }

  async waitReady(name: string, timeoutMs = 30_000): Promise<Ec2Obj> {
    return (await this.waitUntil(
      name,
      "Ready=True",
      (o) => this.ready(o)?.status === "True",
      timeoutMs,
    )) as Ec2Obj;
  }

  async events(name: string): Promise<{ type: string; reason: string; message: string }[]> {
    const res = await this.#cp.request(
      "GET",
      `/api/v1/namespaces/${this.#ns}/events?fieldSelector=involvedObject.name=${name}`,
    );
    return (res.body as { items: { type: string; reason: string; message: string }[] }).items;
  }

  async hasEvent(name: string, type: string, reason: string): Promise<boolean> {
    return (await this.events(name)).some((e) => e.type === type && e.reason === reason);
  }

  /** The instance with `id`, in any state, or undefined. */
  async instance(id: string, region = "us-east-1"): Promise<Instance | undefined> {
    const out = await this.ec2(region).send(
      new DescribeInstancesCommand({ Filters: [{ Name: "instance-id", Values: [id] }] }),
    );
    return out.Reservations?.[0]?.Instances?.[0];
  }

  /** Every instance carrying the UID tag `uid`, terminated ones included. */
  async instancesOf(uid: string, region = "us-east-1"): Promise<Instance[]> {
    const out = await this.ec2(region).send(
      new DescribeInstancesCommand({ Filters: [{ Name: `tag:${OWNERSHIP_TAGS.uid}`, Values: [uid] }] }),
    );
    return (out.Reservations ?? []).flatMap((r) => r.Instances ?? []);
  }

  /** Instances carrying the UID tag `uid` that are not terminated. */
  async liveInstancesOf(uid: string, region = "us-east-1"): Promise<Instance[]> {
    return (await this.instancesOf(uid, region)).filter((i) => i.State?.Name !== "terminated");
  }

  reconciles(result?: string): Promise<number> {
    return this.#op().metric("controller_runtime_reconcile_total", {
      controller: "ec2instance",
      ...(result !== undefined ? { result } : {}),
    });
  }

  /** Waits until the controller has reconciled at least `n` more times. */
  async waitReconciles(n: number): Promise<void> {
    const start = await this.reconciles();
    await waitFor(`${n} more reconciles`, async () => (await this.reconciles()) >= start + n, 30_000, 100);
  }

  /** The sum of `metric` over the series whose `label` is one of `values`. */
  async sum(values: string[], label: string, metric: string): Promise<number> {
    let n = 0;
    for (const v of values) n += await this.#op().metric(metric, { [label]: v });
    return n;
  }
}
