import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HEAP_SIZED_ENV, heapCeilingMiB, heapReexec, heapSizing, setsHeapCeiling } from "./ceiling.ts";

const MiB = 1024 * 1024;
const limitOf = (bytes: number) => ({
  read: (file: string) =>
    file === "/proc/self/cgroup"
      ? "0::/\n"
      : file === "/proc/self/mountinfo"
        ? "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
        : file === "/sys/fs/cgroup/memory.max"
          ? `${bytes}\n`
          : undefined,
});

describe("heapCeilingMiB", () => {
  it("keeps 96 MiB or a quarter of the limit, whichever is more, outside the heap", () => {
    assert.equal(heapCeilingMiB(256 * MiB), 160);
    assert.equal(heapCeilingMiB(384 * MiB), 288);
    assert.equal(heapCeilingMiB(512 * MiB), 384);
    assert.equal(heapCeilingMiB(1024 * MiB), 768);
    assert.equal(heapCeilingMiB(4096 * MiB), 3072);
  });

  it("never goes below 32 MiB", () => {
    assert.equal(heapCeilingMiB(64 * MiB), 32);
  });
});

describe("setsHeapCeiling", () => {
  it("recognises every spelling of the old-space flags", () => {
    assert.equal(setsHeapCeiling(["--max-old-space-size=192"]), true);
    assert.equal(setsHeapCeiling(["--max_old_space_size=192"]), true);
    assert.equal(setsHeapCeiling(["--max-old-space-size-percentage=50%"]), true);
    assert.equal(setsHeapCeiling(["--max-semi-space-size=1"]), false);
    assert.equal(setsHeapCeiling([]), false);
  });
});

describe("heapReexec", () => {
  const proc = {
    execPath: "/nodejs/bin/node",
    execArgv: ["--enable-source-maps"],
    argv: ["/nodejs/bin/node", "/app/dist/kubeprovisioner.mjs", "--leader-elect"],
    env: { NODE_OPTIONS: "--max-semi-space-size=1", HOME: "/home" },
  };

  it("re-runs the same command with the ceiling from the limit, once", () => {
    const plan = heapReexec(proc, limitOf(512 * MiB));
    assert.ok(plan);
    assert.equal(plan.file, "/nodejs/bin/node");
    assert.deepEqual(plan.args, [
      "/nodejs/bin/node",
      "--enable-source-maps",
      "--max-old-space-size=384",
      "/app/dist/kubeprovisioner.mjs",
      "--leader-elect",
    ]);
    assert.equal(plan.env.NODE_OPTIONS, "--max-semi-space-size=1");
    assert.equal(plan.env[HEAP_SIZED_ENV], String(512 * MiB));
    // The replaced process does not do it again.
    assert.equal(heapReexec({ ...proc, env: plan.env }, limitOf(512 * MiB)), undefined);
  });

  it("leaves an explicit ceiling alone, in NODE_OPTIONS or on the command line", () => {
    const env = { NODE_OPTIONS: "--max-semi-space-size=1 --max-old-space-size=192" };
    assert.equal(heapReexec({ ...proc, env }, limitOf(512 * MiB)), undefined);
    const execArgv = ["--max-old-space-size=1000"];
    assert.equal(heapReexec({ ...proc, execArgv }, limitOf(512 * MiB)), undefined);
  });

  it("does nothing without a memory limit", () => {
    assert.equal(heapReexec(proc, { read: () => undefined }), undefined);
  });
});

describe("heapSizing", () => {
  it("reports the ceiling, and the limit when the heap was sized from one", () => {
    assert.deepEqual(heapSizing(400 * MiB, {}), { ceilingMiB: 400 });
    assert.deepEqual(heapSizing(400 * MiB, { [HEAP_SIZED_ENV]: String(512 * MiB) }), {
      ceilingMiB: 400,
      memoryLimitMiB: 512,
    });
  });
});
