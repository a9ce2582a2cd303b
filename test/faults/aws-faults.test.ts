/**
 * AWS faults: 30 % of the operator's AWS calls fail (HTTP 500, HTTP 503, the service's throttling
 * error, a connection reset before or after the call reached AWS). Everything converges with one
 * AWS resource per object; the reconcile rate stays under a stated bound (no hot loop); the
 * metrics show the errors and the retries; a converged fleet at rest makes no Kubernetes writes
 * at all, because a failure that a retry heals is never recorded on the object; deletion under
 * the same faults leaves nothing behind.
 */
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import { metricSamples } from "../../src/runtime/testing/prometheus-text.ts";
import type { ProxiedCall } from "../support/aws-proxy.ts";
import { waitFor, WAIT_MS } from "../support/process.ts";
import { Fleet, KINDS, changed, plan, versions } from "./fleet.ts";
import { seededRandom, seed } from "./random.ts";
import { record, sized } from "./results.ts";

const SIZES = sized({
  full: { objects: 180, pollSeconds: 10, restSeconds: 60, faultRate: 0.3 },
  reduced: { objects: 12, pollSeconds: 3, restSeconds: 12, faultRate: 0.3 },
});
/** The stated bound: at rest, at most two reconciles per object per poll period. */
const REST_BOUND_PER_MIN = 2 * (60 / SIZES.pollSeconds);
/** Over the whole run (creates, retries, deletes included): at most this many per object per minute. */
const RUN_BOUND_PER_MIN = 4 * (60 / SIZES.pollSeconds);

/** `aws_api_requests_total` by `code`, summed over services and operations. */
async function awsCodes(metricsUrl: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const s of metricSamples(await (await fetch(metricsUrl)).text(), "aws_api_requests_total")) {
    const code = s.labels.code ?? "";
    out[code] = (out[code] ?? 0) + s.value;
  }
  return out;
}

/** The codes the operator must count for the faults injected into `calls`. */
function expectedCodes(calls: readonly ProxiedCall[]): Set<string> {
  const out = new Set<string>();
  for (const c of calls) {
    if (c.fault === undefined) continue;
    if (c.fault === "reset-before" || c.fault === "reset-after") out.add("TimeoutError");
    else if (c.fault === "throttle") {
      if (c.service === "ec2") out.add("RequestLimitExceeded");
      else if (c.service === "s3") out.add("SlowDown");
    } else if (c.fault === "http500" && c.service !== "sqs") out.add("InternalError");
  }
  return out;
}

describe("AWS faults: 30 % of calls fail with 5xx, throttling or resets", () => {
  const fleet = new Fleet();
  before(() => fleet.start());
  after(() => fleet.stop());

  it("converges without duplicates or hot loops, writes nothing at rest, and deletes everything", async () => {
    const objs = plan("flaky", SIZES.objects);
    fleet.proxy.setFaults({ rate: SIZES.faultRate, random: seededRandom(seed) });
    const op = await fleet.startOperator([
      "--leader-elect=false",
      `--poll-interval=${SIZES.pollSeconds}s`,
      "--max-concurrent-reconciles=8",
    ]);
    const reconciles = (): Promise<number> => fleet.metric("controller_runtime_reconcile_total", {}, [op]);
    const t0 = performance.now();
    await fleet.createAll(objs);
    const converge = await fleet.waitReady(objs, sized({ full: 600_000, reduced: 120_000 }));

    // Rest: one poll period to settle (the last creates' own status writes), then a measured window.
    await delay(SIZES.pollSeconds * 1000);
    const [r0, w0, v0, f0] = [
      await reconciles(),
      await fleet.kubeWrites(op),
      await versions(fleet),
      fleet.proxy.faults(),
    ];
    await delay(SIZES.restSeconds * 1000);
    const [r1, w1, v1, f1] = [
      await reconciles(),
      await fleet.kubeWrites(op),
      await versions(fleet),
      fleet.proxy.faults(),
    ];
    const restRate = (r1 - r0) / objs.length / (SIZES.restSeconds / 60);
    const faultsAtRest =
      Object.values(f1).reduce((a, b) => a + b, 0) - Object.values(f0).reduce((a, b) => a + b, 0);
    const restWrites = w1 - w0;
    const restChanged = changed(v0, v1);

    const census = await fleet.census();
    assert.deepEqual(census.notReady, []);
    assert.deepEqual(census.duplicates, []);
    assert.deepEqual(census.missing, []);
    assert.deepEqual(census.orphans, []);

    assert.ok(op.metricsUrl !== undefined);
    const metricsUrl = op.metricsUrl;
    // Every fault the proxy has injected so far must show in the operator's metrics under the
    // code the SDK gives it (a reset connection, ECONNRESET or EPIPE, is named TimeoutError).
    // Faults injected later, while deleting, are not asked for: these counts are read now. A
    // fault just answered may still be on its way to the operator, so read until each shows.
    const expected = expectedCodes(fleet.proxy.calls);
    let codes: Record<string, number> = {};
    const missing = (): string[] => [...expected].filter((c) => (codes[c] ?? 0) === 0);
    await waitFor(
      "every injected fault's code in aws_api_requests_total",
      async () => {
        codes = await awsCodes(metricsUrl);
        return missing().length === 0;
      },
      WAIT_MS,
      200,
    ).catch(() => undefined);
    const errorAttempts = Object.entries(codes)
      .filter(([c]) => c !== "OK")
      .reduce((a, [, n]) => a + n, 0);
    const retries = await fleet.metric("workqueue_retries_total", {}, [op]);
    const reconcileErrors = (): Promise<number> =>
      fleet.metric("controller_runtime_reconcile_errors_total", {}, [op]);
    const naturalErrors = await reconcileErrors();
    // A reconcile fails only once a call has failed every attempt the SDK makes (0.3^3 of calls),
    // which a small fleet may never meet: for a spell every call fails, until one reconcile has
    // run out of retries and is counted and retried.
    fleet.proxy.setFaults({ rate: 1, random: seededRandom(seed) });
    await waitFor(
      "a reconcile that ran out of AWS retries",
      async () => (await reconcileErrors()) > naturalErrors,
      WAIT_MS,
      200,
    );
    fleet.proxy.setFaults({ rate: SIZES.faultRate, random: seededRandom(seed + 1) });

    await fleet.deleteAll(objs);
    const drain = await fleet.waitNoObjects(sized({ full: 600_000, reduced: 120_000 }));
    const leaks = await fleet.liveResources();
    const minutes = (performance.now() - t0) / 60_000;
    const runRate = (await reconciles()) / objs.length / minutes;
    const injected = fleet.proxy.faults();

    record(
      "aws-faults",
      { ...SIZES, regions: 3, seed, kinds: Object.keys(KINDS).length },
      {
        convergeSeconds: Math.round(converge / 1000),
        deleteSeconds: Math.round(drain / 1000),
        injectedFaults: Object.values(injected).reduce((a, b) => a + b, 0),
        ...Object.fromEntries(Object.entries(injected).map(([k, n]) => [`injected.${k}`, n])),
        awsCallsSeen: fleet.proxy.calls.length,
        runInstancesAnsweredFromClientToken: fleet.proxy.launchReplays(),
        faultsInRestWindow: faultsAtRest,
        reconcilesPerObjectPerMinuteAtRest: Number(restRate.toFixed(2)),
        boundAtRest: REST_BOUND_PER_MIN,
        reconcilesPerObjectPerMinuteWholeRun: Number(runRate.toFixed(2)),
        boundWholeRun: RUN_BOUND_PER_MIN,
        kubeWritesAtRest: restWrites,
        objectsChangedAtRest: restChanged,
        awsErrorAttempts: errorAttempts,
        ...Object.fromEntries(
          Object.entries(codes)
            .filter(([c]) => c !== "OK")
            .map(([c, n]) => [`awsErrors.${c}`, n]),
        ),
        workqueueRetriesInclPolls: retries,
        reconcileErrors: naturalErrors,
        duplicates: census.duplicates.length,
        orphans: census.orphans.length,
        leakedAfterDeletion: leaks.length,
      },
    );

    assert.ok(faultsAtRest > 0, "faults were injected while at rest");
    assert.equal(restWrites, 0, `Kubernetes writes at rest under ${SIZES.faultRate * 100} % faults`);
    assert.equal(restChanged, 0, "no object changed at rest");
    assert.ok(restRate <= REST_BOUND_PER_MIN, `${restRate.toFixed(2)} reconciles/object/min at rest`);
    assert.ok(runRate <= RUN_BOUND_PER_MIN, `${runRate.toFixed(2)} reconciles/object/min over the run`);
    assert.ok(errorAttempts > 0 && retries > 0, "errors and retries are visible");
    assert.ok(expected.size >= 3, `faults of several kinds were injected: ${[...expected].join(", ")}`);
    assert.deepEqual(missing(), [], "codes of injected faults missing from aws_api_requests_total");
    assert.deepEqual(
      leaks.map((r) => `${r.kind} ${r.id}`),
      [],
      "nothing left after deletion under faults",
    );
  });
});
