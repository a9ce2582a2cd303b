/**
 * The operator process with leader election, end to end: it exposes every metric the README lists,
 * and on SIGTERM a reconcile that is waiting for AWS runs to its end (its status write included)
 * while the operator still holds the Lease; only then is the Lease released and the process exits 0.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { parseMetrics } from "../../src/runtime/testing/prometheus-text.ts";
import { repoRoot, waitFor, within, WAIT_MS } from "../support/process.ts";
import { leaseSpec } from "./manager-fixture.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const NS = "graceful";
const LEASE = "graceful-shutdown";

describe("the operator process with leader election", () => {
  const env = new SqsEnv(NS, [
    "--leader-elect",
    `--leader-election-namespace=${NS}`,
    `--leader-election-id=${LEASE}`,
    "--graceful-shutdown-timeout=30s",
  ]).hooks();

  it("exposes every metric the README's metrics table names", async () => {
    const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
    const section = /^## Metrics\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? "";
    const names = section
      .split("\n")
      .filter((l) => /^\| `/.test(l))
      .flatMap((l) => [...(l.split("|")[1] ?? "").matchAll(/`([a-z_]+)`/g)].map((m) => m[1] ?? ""));
    assert.ok(names.length >= 20, `names read from the README: ${names.join(", ")}`);
    assert.ok(names.includes("aws_api_rate_budget_wait_seconds"));
    const metricsUrl = env.op.metricsUrl;
    assert.ok(metricsUrl !== undefined);
    const { declared, samples } = parseMetrics(await (await fetch(metricsUrl)).text());
    assert.deepEqual(
      names.filter((n) => !declared.has(n)),
      [],
      "metrics in the README that the operator does not expose",
    );

    // The drift metric's `setting` values per kind, as the README lists them (`Kind: \`a\`, ...;`),
    // are exactly the series the operator declares (each starts at 0).
    const driftRow =
      section.split("\n").find((l) => l.startsWith("| `kubeprovisioner_drift_repairs_total`")) ?? "";
    const listed = new Map(
      [...driftRow.matchAll(/([A-Z][A-Za-z0-9]+): ((?:`[A-Za-z]+`(?:, )?)+)/g)].map((m) => [
        m[1] ?? "",
        [...(m[2] ?? "").matchAll(/`([A-Za-z]+)`/g)].map((x) => x[1] ?? "").sort(),
      ]),
    );
    const exposed = new Map<string, string[]>();
    for (const s of samples.filter((x) => x.name === "kubeprovisioner_drift_repairs_total")) {
      const kind = s.labels.kind ?? "";
      exposed.set(kind, [...(exposed.get(kind) ?? []), s.labels.setting ?? ""].sort());
    }
    assert.ok(exposed.size >= 3, `kinds with drift series: ${[...exposed.keys()].join(", ")}`);
    assert.deepEqual(Object.fromEntries(listed), Object.fromEntries(exposed), "README's drift settings");
    for (const prefix of ["process_", "nodejs_"])
      assert.ok(
        [...declared].some((n) => n.startsWith(prefix)),
        `some ${prefix}* metric`,
      );
  });

  it("finishes an in-flight reconcile before it releases the Lease on SIGTERM", async () => {
    const id = await env.op.identity();
    await waitFor(
      "the Lease",
      async () => (await leaseSpec(env.cp, NS, LEASE))?.holderIdentity === id,
      WAIT_MS,
    );

    // Hold CreateQueue's answer: the reconcile that creates the queue is in flight until released.
    const arrived = Promise.withResolvers<void>();
    const release = Promise.withResolvers<"deliver">();
    env.proxy.onResponse("CreateQueue", () => {
      arrived.resolve();
      return release.promise;
    });
    await env.create("inflight", { queueName: "inflight" });
    await within("CreateQueue to reach AWS", arrived.promise);

    env.op.signal("SIGTERM");
    await env.op.waitForLog("stopping: waiting for in-flight reconciles");
    assert.equal(
      (await leaseSpec(env.cp, NS, LEASE))?.holderIdentity,
      id,
      "the Lease is kept while a reconcile runs",
    );
    assert.equal(env.op.process.proc.exitCode, null, "still running");

    release.resolve("deliver");
    assert.equal(await within("the operator to exit", env.op.process.exited), 0);
    const msgs = env.op.logLines().map((l) => l.msg);
    const finished = msgs.indexOf("all workers finished");
    const released = msgs.indexOf("released leader lease");
    assert.ok(
      finished >= 0 && released > finished,
      `workers finished at line ${finished}, Lease released at ${released}`,
    );
    assert.equal((await leaseSpec(env.cp, NS, LEASE))?.holderIdentity ?? "", "", "the Lease is free");
    const obj = await env.get("inflight");
    assert.equal(obj?.status?.queueUrl, (await env.queue("inflight")).url, "the reconcile wrote its status");
  });
});
