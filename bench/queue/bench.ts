/**
 * Runs the seed-003 concurrency scenario on our work queue and prints one JSON line:
 * `{"wall_s":..,"reconciles":..,"overlaps":..,"stale_keys":..}`.
 *
 * Flags (all optional): --workers 16 --keys 64 --adds 320000 --adds-per-yield 32 --warmup 3
 * --queue workqueue|naive|named --yield immediate|coalesced. `named` gives the queue a name, so
 * it records the workqueue_* metrics (client-go's default queue in the Go benchmark records
 * none). The untimed warm-up
 * runs let V8 compile the hot path before the measured run; the Go program does the same.
 * `--yield immediate` (the default) makes every yield its own `setImmediate`; `coalesced` lets
 * all yields of one event-loop turn share one, which still yields a full turn per reconcile but
 * removes most of Node's per-yield cost (see docs/workqueue.md).
 */
import { parseArgs } from "node:util";
import { Registry } from "prom-client";
import { WorkQueue } from "../../src/runtime/workqueue/index.ts";
import {
  NaiveFifo,
  coalescedYieldToEventLoop,
  runContention,
  yieldToEventLoop,
  type ContentionQueue,
} from "../../src/runtime/workqueue/testing/contention.ts";

const { values } = parseArgs({
  options: {
    workers: { type: "string", default: "16" },
    keys: { type: "string", default: "64" },
    adds: { type: "string", default: "320000" },
    "adds-per-yield": { type: "string", default: "32" },
    warmup: { type: "string", default: "3" },
    queue: { type: "string", default: "workqueue" },
    yield: { type: "string", default: "immediate" },
  },
});

function makeQueue(kind: string): ContentionQueue<string> {
  switch (kind) {
    case "workqueue":
      return new WorkQueue<string>();
    case "named":
      return new WorkQueue<string>({ name: "bench", registry: new Registry() });
    case "naive":
      return new NaiveFifo<string>();
    default:
      throw new Error(`unknown --queue ${kind}`);
  }
}

const options = {
  workers: Number(values.workers),
  keys: Number(values.keys),
  adds: Number(values.adds),
  addsPerYield: Number(values["adds-per-yield"]),
  yieldOnce: values.yield === "coalesced" ? coalescedYieldToEventLoop : yieldToEventLoop,
};
if (values.yield !== "immediate" && values.yield !== "coalesced")
  throw new Error(`unknown --yield ${values.yield}`);
for (let i = 0; i < Number(values.warmup); i++) await runContention(makeQueue(values.queue), options);
const result = await runContention(makeQueue(values.queue), options);
console.log(
  JSON.stringify({
    wall_s: result.wallMs / 1000,
    reconciles: result.reconciles,
    overlaps: result.overlaps,
    stale_keys: result.staleKeys,
  }),
);
