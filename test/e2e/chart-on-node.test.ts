/**
 * The chart's pods on a real kubelet, the reduced pass of `make test` (the full one is
 * `make test-cluster`): the image built from the Dockerfile (by `make image` before the test
 * files start, cached by content) with the layout the chart expects, its CLI run by the runtime,
 * a single-node cluster of real parts, `helm install` with no values at all (Ready without AWS
 * credentials while there are no objects), then an upgrade to moto's endpoint on the host and a
 * credentials Secret, the samples Ready in moto, and the leader's container SIGKILLed: it
 * restarts through the kubelet, and every object still has exactly one resource.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { waitFor } from "../support/process.ts";
import { samples } from "./flow-support.ts";
import { CHART_DIR } from "./helm.ts";
import {
  NS,
  RELEASE,
  startChartNode,
  waitForReadyPods,
  waitForSamplesReady,
  type ChartNode,
} from "./node-support.ts";

/** The resources the samples ask for, per kind. */
function expectedCounts(): { buckets: number; queues: number; instances: number } {
  const all = samples();
  const n = (kind: string): number => all.filter((s) => s.kind === kind).length;
  return { buckets: n("S3Bucket"), queues: n("SqsQueue"), instances: n("Ec2Instance") };
}

describe("the chart on a real node (reduced pass)", () => {
  let node: ChartNode | undefined;

  before(async () => {
    node = await startChartNode();
  });

  after(async () => {
    const left = await node?.stop();
    assert.deepEqual(left ?? [], [], "the cluster left nothing behind");
  });

  it("builds the image from the Dockerfile: distroless layout, nonroot user, root-owned code, no shell", () => {
    assert.ok(node);
    const archive = node.image.archive;
    const read = (member: string): string =>
      execFileSync("tar", ["-xOf", archive, member], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
    const [manifest] = JSON.parse(read("manifest.json")) as {
      Config: string;
      RepoTags: string[];
      Layers: string[];
    }[];
    assert.ok(manifest);
    assert.deepEqual(manifest.RepoTags, [node.image.ref], "named as the chart's default image");
    const config = (
      JSON.parse(read(manifest.Config)) as {
        config: { User?: string; Entrypoint?: string[]; Env?: string[] };
      }
    ).config;
    assert.equal(config.User, "65532:65532");
    assert.deepEqual(config.Entrypoint, ["/nodejs/bin/node", "/app/dist/kubeprovisioner.mjs"]);
    assert.ok(
      config.Env?.some((e) => e.startsWith("NODE_OPTIONS=--max-semi-space-size=1")),
      "the V8 flags",
    );
    const entries = manifest.Layers.flatMap((layer) =>
      execFileSync("sh", ["-c", 'tar -xOf "$0" "$1" | tar -tv --numeric-owner', archive, layer], {
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
      })
        .split("\n")
        .filter(Boolean),
    );
    const names = entries.map((e) =>
      e
        .split(/\s+/)
        .slice(5)
        .join(" ")
        .replace(/^\.?\//, "")
        .replace(/\/$/, ""),
    );
    for (const want of ["nodejs/bin/node", "app/dist/kubeprovisioner.mjs", "app/package.json", "etc/passwd"])
      assert.ok(names.includes(want), `the image holds ${want}`);
    assert.ok(
      names.some((n) => /^app\/dist\/chunks\/[^/]+\.mjs$/.test(n)),
      "the image holds the chunks the bundle imports on demand",
    );
    assert.ok(!names.some((n) => n.endsWith(".map")), "no source maps in the image");
    for (const sh of ["bin/sh", "bin/bash", "bin/dash", "usr/bin/sh", "bin/busybox"])
      assert.ok(!names.includes(sh), `no shell: ${sh}`);
    const app = entries.filter((e) => / app(\/|$)/.test(e));
    assert.ok(app.length >= 4);
    for (const e of app) assert.match(e, /^\S+ 0\/0 /, `owned by root: ${e}`);
  });

  it("runs the image's CLI through the runtime", async () => {
    assert.ok(node);
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "help", namespace: "default" },
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "help", image: node.image.ref, imagePullPolicy: "Never", args: ["--help"] }],
      },
    };
    await node.kubectl(["apply", "-f", "-"], JSON.stringify(pod));
    await node.kubectl(["wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/help", "--timeout=120s"]);
    assert.match(await node.kubectl(["logs", "help"]), /--leader-elect/);
    await node.kubectl(["delete", "pod", "help", "--wait=false"]);
  });

  it("runs the image's pods Ready through the kubelet's probes with no values at all, with one Lease holder", async () => {
    assert.ok(node);
    // As a user installs it: no image values, no AWS credentials; Ready while there are no objects.
    await node.helm(["install", RELEASE, CHART_DIR, "--namespace", NS, "--wait", "--timeout", "180s"]);
    const pods = await waitForReadyPods(node, 2);
    let holder = "";
    await waitFor("a Lease holder", async () => (holder = await node!.leaseHolder()) !== "", 60_000, 500);
    assert.ok(
      pods.some((p) => holder.startsWith(`${p.name}_`)),
      `the Lease holder ${holder} is one of the pods ${pods.map((p) => p.name).join(", ")}`,
    );
  });

  it("makes every sample Ready in moto, one resource per object", async () => {
    assert.ok(node);
    await node.install([], "upgrade"); // moto's endpoint and the credentials Secret
    await waitForReadyPods(node, 2);
    for (const s of samples()) {
      const profile = s.spec.iamInstanceProfile;
      if (typeof profile === "string") await node.moto.createInstanceProfile(profile);
    }
    await node.kubectl(["apply", "-k", path.dirname(samples()[0]?.file ?? "config/samples/x")]);
    await waitForSamplesReady(node);
    assert.deepEqual(await node.awsCounts(), expectedCounts());
  });

  it("restarts the leader's container after a SIGKILL without duplicating a resource", async () => {
    assert.ok(node);
    const holder = await node.leaseHolder();
    const leader = (await node.pods()).find((p) => holder.startsWith(`${p.name}_`));
    assert.ok(leader, `a pod holds the Lease (${holder})`);
    const pid = await node.containerPid(leader.name);
    process.kill(pid, "SIGKILL");
    await waitFor(
      `${leader.name} restarted and Ready`,
      async () => {
        const p = (await node!.pods()).find((x) => x.name === leader.name);
        return p !== undefined && p.restarts > leader.restarts && p.ready;
      },
      180_000,
      500,
    );
    // A new object after the kill is created once, by whichever pod leads now.
    await node.kubectl(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "compute.cloud.com/v1",
        kind: "SqsQueue",
        metadata: { name: "after-kill", namespace: "default" },
        spec: { queueName: "kubeprovisioner-after-kill", region: "us-east-1" },
      }),
    );
    await node.kubectl(["wait", "--for=condition=Ready", "sqsqueue/after-kill", "--timeout=180s"]);
    await waitForSamplesReady(node);
    const want = expectedCounts();
    assert.deepEqual(await node.awsCounts(), { ...want, queues: want.queues + 1 });
  });
});
