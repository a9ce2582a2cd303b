import { test } from "node:test";
import assert from "node:assert/strict";
import { DurationSyntaxError, formatDuration, parseDuration } from "./duration.ts";

test("parseDuration reads Go durations into milliseconds", () => {
  assert.equal(parseDuration("30s"), 30_000);
  assert.equal(parseDuration("5m"), 300_000);
  assert.equal(parseDuration("10h"), 36_000_000);
  assert.equal(parseDuration("2h45m"), 9_900_000);
  assert.equal(parseDuration("1.5h"), 5_400_000);
  assert.equal(parseDuration("300ms"), 300);
  assert.equal(parseDuration(".5s"), 500);
  assert.equal(parseDuration("1500us"), 1.5);
  assert.equal(parseDuration("0"), 0);
  assert.equal(parseDuration("-2s"), -2_000);
});

test("parseDuration rejects numbers without units and unknown units", () => {
  for (const bad of ["", "10", "s", "5d", "1h-2m", "1.2.3s", "abc", "5 m"]) {
    assert.throws(() => parseDuration(bad), DurationSyntaxError, bad);
  }
});

test("formatDuration prints like Go", () => {
  assert.equal(formatDuration(0), "0s");
  assert.equal(formatDuration(300), "300ms");
  assert.equal(formatDuration(2_500), "2.5s");
  assert.equal(formatDuration(300_000), "5m0s");
  assert.equal(formatDuration(36_000_000), "10h0m0s");
  assert.equal(parseDuration(formatDuration(9_900_500)), 9_900_500);
});
