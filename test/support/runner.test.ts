import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { timingTable } from "./file-timings-reporter.ts";
import { FILE_GROUP_ENV, groupFiles, mergeDurations, startOrder } from "./runner.ts";

describe("the test runner's start order", () => {
  it("starts the timed files longest first, after the files never timed", () => {
    const files = [
      "src/a.test.ts",
      "test/integration/b.test.ts",
      "test/integration/new.test.ts",
      "src/new.test.ts",
      "test/e2e/new.test.ts",
      "test/e2e/c.test.ts",
    ];
    const durations = { "src/a.test.ts": 0.4, "test/integration/b.test.ts": 40, "test/e2e/c.test.ts": 90 };
    assert.deepEqual(startOrder(files, durations), [
      "test/e2e/new.test.ts",
      "test/integration/new.test.ts",
      "src/new.test.ts",
      "test/e2e/c.test.ts",
      "test/integration/b.test.ts",
      "src/a.test.ts",
    ]);
  });

  it("orders files of equal duration by name, so two runs of the same figures start alike", () => {
    assert.deepEqual(startOrder(["b", "a", "c"], { a: 5, b: 5, c: 6 }), ["c", "a", "b"]);
  });

  it("keeps the figures of files this run did not run, and takes this run's for the others", () => {
    const merged = mergeDurations({ "a.test.ts": 10, "b.test.ts": 20 }, [
      { file: "b.test.ts", seconds: 31.26, passed: true },
      { file: "c.test.ts", seconds: 2, passed: false },
    ]);
    assert.deepEqual(merged, { "a.test.ts": 10, "b.test.ts": 31.3, "c.test.ts": 2 });
  });
});

describe("the table of the slowest files", () => {
  it("lists the slowest first, at most the count asked for, with the sum of all files", () => {
    const table = timingTable(
      [
        { file: "a.test.ts", seconds: 1, passed: true },
        { file: "b.test.ts", seconds: 30, passed: false },
        { file: "c.test.ts", seconds: 12.34, passed: true },
      ],
      2,
    );
    assert.equal(
      table,
      [
        "slowest 2 of 3 test files (sum of all files 43 s):",
        "     30.0 s  b.test.ts  (failed)",
        "     12.3 s  c.test.ts",
        "",
      ].join("\n"),
    );
  });
});

describe("the files the runner runs in one process", () => {
  it("reads the group's absolute paths, and an unset variable as no files", () => {
    assert.deepEqual(groupFiles(JSON.stringify(["/repo/src/a.test.ts", "/repo/bench/b.test.ts"])), [
      "/repo/src/a.test.ts",
      "/repo/bench/b.test.ts",
    ]);
    assert.deepEqual(groupFiles(undefined), []);
  });

  it("refuses a value that is not a JSON array of absolute paths, naming the variable", () => {
    for (const value of ['"src/a.test.ts"', '["src/a.test.ts"]', "[1]", "{}"])
      assert.throws(() => groupFiles(value), new RegExp(FILE_GROUP_ENV));
  });
});
