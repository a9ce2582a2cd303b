import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  costFigures,
  minutesSeconds,
  parseRunSummary,
  type TestLoopResults,
  type TestLoopRun,
} from "./results.ts";

const run = (seconds: number, tests: number): TestLoopRun => ({
  seconds,
  exitCode: 0,
  tests,
  failed: 0,
  suiteSeconds: seconds - 60,
  slowestFiles: [],
  loadAfter: 1,
});
const session = (kind: "warm" | "first", runs: TestLoopRun[]): TestLoopResults["sessions"][number] => ({
  label: "x",
  kind,
  commit: "abc",
  date: "2026-12-03T00:00:00Z",
  machine: { cpus: 2, model: "m", memoryGiB: 24, node: "v24" },
  runs,
});

describe("test loop results", () => {
  it("reads the last runner summary, not lint's earlier one", () => {
    const out = [
      "ℹ tests 38",
      "ℹ fail 0",
      "ℹ duration_ms 3053.8",
      "...",
      "ℹ tests 1551",
      "ℹ pass 1550",
      "ℹ fail 1",
      "ℹ duration_ms 846110.4",
    ].join("\n");
    assert.deepEqual(parseRunSummary(out), { tests: 1551, failed: 1, suiteSeconds: 846 });
  });

  it("refuses output that ended before the suite", () => {
    assert.throws(() => parseRunSummary("make: *** [lint] Error 1\n"), /no test runner summary/);
  });

  it("writes durations as README does", () => {
    assert.equal(minutesSeconds(359.6), "6 min 0 s");
    assert.equal(minutesSeconds(884), "14 min 44 s");
  });

  it("states the latest session of a kind as its fastest to slowest run", () => {
    const results: TestLoopResults = {
      sessions: [
        session("warm", [run(900, 1500)]),
        session("first", [run(500, 1551)]),
        session("warm", [run(350, 1551), run(341, 1551), run(362, 1552)]),
      ],
    };
    assert.deepEqual(costFigures(results, "warm"), { time: "5 min 41 s to 6 min 2 s", tests: "1,551–1,552" });
    assert.deepEqual(costFigures(results, "first"), { time: "8 min 20 s", tests: "1,551" });
    assert.throws(() => costFigures({ sessions: [] }, "warm"), /no warm session/);
  });
});
