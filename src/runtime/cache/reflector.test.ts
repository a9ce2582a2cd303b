import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { ApiError } from "../kube/errors.ts";
import type { KubeList, KubeObject } from "../kube/object.ts";
import type { WatchEvent } from "../kube/watch.ts";
import { createLogger, type Logger } from "../logging.ts";
import { FakeClock, flushMicrotasks } from "../testing/fake-clock.ts";
import type { ListerWatcher } from "./lister-watcher.ts";
import { Reflector } from "./reflector.ts";

interface Line {
  /** The fake clock's time when the line was written. */
  at: number;
  level: number;
  msg: string;
  failures?: number;
  repeated?: number;
  err?: { message?: string };
}

/** A logger at debug whose lines are kept, parsed, with the time of `clock` when written. */
function capturingLogger(clock: FakeClock): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const logger = createLogger({
    level: "debug",
    destination: new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split("\n"))
          if (l !== "") lines.push({ ...(JSON.parse(l) as Line), at: clock.now() });
        done();
      },
    }),
  });
  return { logger, lines };
}

/** A collection whose lists fail with `failure()` while it is set, then answer with no items. */
class FailingApi implements ListerWatcher<KubeObject> {
  readonly description = "/apis/example.com/v1/widgets";
  failure: (() => Error) | undefined;
  lists = 0;

  async list(): Promise<KubeList<KubeObject>> {
    this.lists++;
    await Promise.resolve();
    if (this.failure !== undefined) throw this.failure();
    return { metadata: { resourceVersion: "1" }, items: [] };
  }

  /** A watch that stays open, silent, until aborted. */
  async *watch(_opts: unknown, signal: AbortSignal): AsyncIterable<WatchEvent<KubeObject>> {
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    yield* [];
  }
}

const unauthorized = (): Error =>
  new ApiError({ status: 401, reason: "Unauthorized", message: "Unauthorized", method: "GET", path: "/w" });

async function advanceBy(clock: FakeClock, ms: number, step = 1_000): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    await clock.advance(step);
    await flushMicrotasks(4);
  }
}

describe("Reflector failure logging", () => {
  it("logs a list failure that repeats for an hour once, then at most every 5 minutes, and its end once", async () => {
    const clock = new FakeClock();
    const { logger, lines } = capturingLogger(clock);
    const api = new FailingApi();
    api.failure = unauthorized;
    const reflector = new Reflector<KubeObject>({
      lw: api,
      sink: { replace() {}, upsert() {}, remove() {} },
      resourceLabel: "widgets",
      clock,
      logger,
      registry: new Registry(),
      random: () => 0,
    });
    const stop = new AbortController();
    const start = clock.now();
    const running = reflector.run(stop.signal);
    await advanceBy(clock, 3_600_000, 5_000);
    const failed = lines.filter((l) => l.msg === "list failed");
    // The retries follow the backoff (800 ms doubling to 30 s): about 125 in the hour.
    assert.ok(api.lists > 100, `lists retried with the backoff: ${api.lists}`);
    // One line at once, then one per 5 minutes (each at the first retry due after them): 12 in
    // the hour, each with the failures so far.
    assert.equal(failed.length, 12, `list failed lines: ${failed.length}`);
    for (let i = 1; i < failed.length; i++) {
      const gap = (failed[i]?.at ?? 0) - (failed[i - 1]?.at ?? 0);
      assert.ok(gap >= 300_000 && gap <= 330_000, `gap between lines ${i - 1} and ${i}: ${gap} ms`);
    }
    assert.equal(failed[0]?.at, start, "the first failure logged at once");
    assert.equal(failed[0]?.failures, 1);
    assert.equal(failed[0]?.repeated, undefined);
    assert.equal(failed[1]?.repeated, (failed[1]?.failures ?? 0) - 1);
    assert.equal(
      failed.reduce((n, l) => n + (l.repeated ?? 1), 0),
      failed.at(-1)?.failures,
      "each line stands for the failures since the one before",
    );
    assert.equal(failed[0]?.err?.message, "GET /w: Unauthorized");

    // Another failure is logged at once; the recovery once.
    const before = failed.length;
    api.failure = () => new ApiError({ status: 403, reason: "Forbidden", message: "forbidden" });
    await advanceBy(clock, 30_000);
    assert.equal(lines.filter((l) => l.msg === "list failed").length, before + 1, "a new error at once");
    api.failure = undefined;
    await advanceBy(clock, 30_000);
    const recovered = lines.filter((l) => l.msg === "list succeeded again");
    assert.equal(recovered.length, 1);
    assert.equal(recovered[0]?.failures, api.lists - 1);
    stop.abort();
    await running;
  });
});
