import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { silentLogger } from "../runtime/logging.ts";
import { fitRefusal, HeapFitCheck, HeapTooSmallError } from "./fit-check.ts";

const MiB = 1024 * 1024;

describe("fitRefusal", () => {
  it("accepts a cache that fills up to 60 % of the ceiling", () => {
    assert.equal(
      fitRefusal(10_000, { usedBytes: 230 * MiB, ceilingBytes: 384 * MiB, memoryLimitBytes: 512 * MiB }),
      undefined,
    );
  });

  it("refuses past that, naming the objects, the ceiling, the limit and the limit that fits", () => {
    const message = fitRefusal(40_000, {
      usedBytes: 300 * MiB,
      ceilingBytes: 384 * MiB,
      memoryLimitBytes: 512 * MiB,
    });
    assert.equal(
      message,
      "the cache of 40000 objects fills 300 MiB of the 384 MiB JS heap ceiling, sized from the " +
        "container memory limit of 512 MiB; more than 60 % leaves too little to reconcile them: " +
        'raise resources.limits.memory to at least 704Mi (docs/install.md, "Memory")',
    );
  });

  it("names the flag to raise when the ceiling did not come from the memory limit", () => {
    const message = fitRefusal(40_000, {
      usedBytes: 150 * MiB,
      ceilingBytes: 192 * MiB,
      memoryLimitBytes: undefined,
    });
    assert.equal(
      message,
      "the cache of 40000 objects fills 150 MiB of the 192 MiB JS heap ceiling, set by " +
        "--max-old-space-size or V8's default; more than 60 % leaves too little to reconcile them: " +
        "raise --max-old-space-size to at least 256 (or remove it from NODE_OPTIONS, so that the " +
        'ceiling follows resources.limits.memory) (docs/install.md, "Memory")',
    );
  });
});

describe("HeapFitCheck", () => {
  it("fails once after the initial list when the cache does not fit, writing the termination message", async () => {
    const written: string[] = [];
    const check = new HeapFitCheck({
      waitForCacheSync: () => Promise.resolve(true),
      cachedObjects: () => 12_345,
      logger: silentLogger,
      heap: () => ({ usedBytes: 150 * MiB, ceilingBytes: 160 * MiB, memoryLimitBytes: 256 * MiB }),
      terminationMessage: (m) => written.push(m),
    });
    await assert.rejects(check.start(new AbortController().signal), (err: unknown) => {
      assert.ok(err instanceof HeapTooSmallError);
      assert.match(err.message, /12345 objects fills 150 MiB of the 160 MiB/);
      return true;
    });
    assert.equal(written.length, 1);
  });

  it("runs until stopped when the cache fits", async () => {
    const ac = new AbortController();
    const check = new HeapFitCheck({
      waitForCacheSync: () => Promise.resolve(true),
      cachedObjects: () => 10,
      logger: silentLogger,
      heap: () => ({ usedBytes: 20 * MiB, ceilingBytes: 160 * MiB, memoryLimitBytes: undefined }),
      terminationMessage: () => assert.fail("no termination message"),
    });
    const running = check.start(ac.signal);
    ac.abort();
    await running;
  });
});
