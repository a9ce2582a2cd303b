/**
 * The Ec2Instance layer over {@link ReconcilerEnv}: the kind's defaults and mutating operations,
 * and instance lookups straight at moto (not through the counting proxy).
 */
import { DescribeInstancesCommand, EC2Client, type Instance, type Tag } from "@aws-sdk/client-ec2";
import { OWNERSHIP_TAGS, type Ec2Instance } from "../../src/api/v1/index.ts";
import { waitFor } from "../support/process.ts";
import { sizedBy } from "../support/profile.ts";
import { ReconcilerEnv, type EnvOptions, type Served } from "../support/reconciler-env.ts";

/**
 * The size of the EC2 files' estates: `EC2_PROFILE=full` (`make test-ec2`) runs them at the size
 * their figures state; anything else runs the reduced pass that `make test` includes, the same
 * checks on fewer instances (moto's EC2 slows down as instances pile up, and every launch and
 * termination is a round of polls).
 */
export const ec2Sized = sizedBy("EC2_PROFILE");

/** How many instances a fleet test polls. */
export const FLEET = ec2Sized({ full: 20, reduced: 10 });

/** An Ec2Instance as served. */
export type Ec2Obj = Served<Ec2Instance>;

/** EC2 tags as a map. */
export function tagMap(tags: readonly Tag[] | undefined): Record<string, string> {
  return Object.fromEntries((tags ?? []).map((t) => [t.Key ?? "", t.Value ?? ""]));
}

/** Reconciles and DescribeInstances calls of several poll rounds. */
export interface PollRounds {
  /** Sums over the last three rounds. */
  reconciles: number;
  describes: number;
  /** Every round watched, as `reconciles/describes`. */
  seen: string;
}

/** A running environment for the Ec2Instance tests of one file. */
export class Ec2Env extends ReconcilerEnv<Ec2Obj> {
  constructor(opts: EnvOptions) {
    super(
      {
        kind: "Ec2Instance",
        plural: "ec2instances",
        controller: "ec2instance",
        mutating: [
          "RunInstances",
          "CreateTags",
          "DeleteTags",
          "TerminateInstances",
          "ModifyInstanceMetadataOptions",
          "AssociateIamInstanceProfile",
          "ReplaceIamInstanceProfileAssociation",
          "StopInstances",
          "StartInstances",
          "ModifyInstanceAttribute",
          "MonitorInstances",
          "UnmonitorInstances",
          "ModifyInstanceCreditSpecification",
        ],
        defaults: () => ({ instanceType: "t3.micro", amiId: "ami-1e749f67", region: "us-east-1" }),
      },
      // Polls 2 s apart: the DescribeInstances snapshot answers lookups up to half a poll period
      // old, and at 1 s a reconcile soon after a poll would be answered from it, so the counts
      // of one call per poll these files check would not hold. Transitions still take 500 ms.
      { ...opts, operatorArgs: ["--poll-interval=2s", ...(opts.operatorArgs ?? [])] },
    );
  }

  /** An EC2 client talking to moto directly, so its calls are not counted by the proxy. */
  ec2(region = "us-east-1"): EC2Client {
    return this.client(region, (config) => new EC2Client(config));
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

  /**
   * Watches windows of `perRound` reconciles each (one poll round) until three in a row made
   * about the same number of DescribeInstances calls (within one of each other), and returns
   * their totals. Right after launches the polls are not yet on the poll-period grid, so the
   * first rounds cost more; the stop condition says only that the cost has settled, not how
   * low it settled, so the caller's bound on it is a real check.
   */
  async pollRounds(perRound: number): Promise<PollRounds> {
    let mark = { r: await this.reconciles(), d: this.proxy.count("DescribeInstances") };
    const windows: { reconciles: number; describes: number }[] = [];
    const steady = (): typeof windows => windows.slice(-3);
    const seen = (): string => windows.map((w) => `${w.reconciles}/${w.describes}`).join(" ");
    await waitFor(
      "three poll rounds of the same cost",
      async () => {
        const r = await this.reconciles();
        if (r < mark.r + perRound) return false;
        const d = this.proxy.count("DescribeInstances");
        windows.push({ reconciles: r - mark.r, describes: d - mark.d });
        mark = { r, d };
        const costs = steady().map((w) => w.describes);
        return costs.length === 3 && Math.max(...costs) - Math.min(...costs) <= 1;
      },
      90_000,
      50,
    ).catch((err: unknown) => {
      throw new Error(`reconciles/DescribeInstances per window: ${seen()}`, { cause: err });
    });
    return {
      reconciles: steady().reduce((n, w) => n + w.reconciles, 0),
      describes: steady().reduce((n, w) => n + w.describes, 0),
      seen: seen(),
    };
  }
}
