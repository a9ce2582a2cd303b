/**
 * The heap ceiling follows a real memory cgroup: the operator, started inside a cgroup v1 memory
 * cgroup made for the test, replaces itself once with `--max-old-space-size` from that cgroup's
 * limit (src/heap/ceiling.ts), and its start log reports V8's heap_size_limit. An explicit
 * `--max-old-space-size` in NODE_OPTIONS wins over the limit. This machine mounts the v1 memory
 * controller; its cgroup2 mount has no memory controller, so cgroup v2 is covered by the unit
 * tests' fixture files.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { heapCeilingMiB } from "../../src/heap/ceiling.ts";
import { parseJsonLines } from "../support/json-log.ts";
import { operatorProgram } from "../support/operator-program.ts";
import { removeTempDir, startProcess, trackTempDir, within } from "../support/process.ts";

const MiB = 1024 * 1024;

/** The directory of this process's cgroup in the v1 memory hierarchy. */
function ownMemoryCgroup(): string {
  const line = readFileSync("/proc/self/cgroup", "utf8")
    .split("\n")
    .find((l) => l.split(":")[1]?.split(",").includes("memory"));
  const rel = line?.slice(line.indexOf(":", line.indexOf(":") + 1) + 1);
  assert.ok(rel !== undefined, "a cgroup v1 memory hierarchy");
  return path.join("/sys/fs/cgroup/memory", rel);
}

describe("the heap ceiling under a real memory cgroup", () => {
  let dir: string;
  const made: string[] = [];

  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "kp-heap-"));
    trackTempDir(dir);
  });
  after(() => {
    for (const cg of made) rmdirSync(cg);
    removeTempDir(dir);
  });

  /** Runs the operator inside a new memory cgroup limited to `limitBytes`; its "starting" line. */
  async function startIn(
    limitBytes: number,
    env: Record<string, string> = {},
  ): Promise<Record<string, unknown>> {
    const cg = path.join(ownMemoryCgroup(), `kp-heap-${process.pid}-${made.length}`);
    mkdirSync(cg);
    made.push(cg);
    writeFileSync(path.join(cg, "memory.limit_in_bytes"), String(limitBytes));
    const logFile = path.join(dir, `op-${made.length}.log`);
    // The shell joins the cgroup, then becomes node: the operator starts inside it.
    const proc = startProcess(
      "/bin/sh",
      [
        "-c",
        'echo $$ > "$0/cgroup.procs" && exec "$@"',
        cg,
        process.execPath,
        operatorProgram(),
        `--kubeconfig=${path.join(dir, "absent-kubeconfig")}`,
        "--log-format=json",
      ],
      {
        logFile,
        env: { PATH: process.env.PATH ?? "", HOME: dir, NODE_OPTIONS: "--max-semi-space-size=1", ...env },
      },
    );
    // Without a kubeconfig it stops after the start line: exit 1, "no usable Kubernetes configuration".
    assert.equal(await within("the operator to exit", proc.exited), 1);
    const lines = parseJsonLines<Record<string, unknown>>(readFileSync(logFile, "utf8"));
    const starting = lines.filter((l) => l.msg === "starting");
    assert.equal(starting.length, 1, "one start: the replaced process does not replace itself again");
    const log = readFileSync(logFile, "utf8");
    assert.ok(
      log.includes("no usable Kubernetes configuration"),
      `the operator's log ends:\n${log.slice(-3000)}`,
    );
    return starting[0] as Record<string, unknown>;
  }

  for (const limitMiB of [256, 1024]) {
    it(`sizes V8's heap from a ${limitMiB} MiB limit, leaving room outside it`, async () => {
      const line = await startIn(limitMiB * MiB);
      const heap = line.heap as { ceilingMiB: number; memoryLimitMiB?: number };
      assert.equal(heap.memoryLimitMiB, limitMiB);
      const oldSpace = heapCeilingMiB(limitMiB * MiB);
      // heap_size_limit is the old space plus the young generation (three 1 MiB semi-spaces).
      assert.ok(
        heap.ceilingMiB >= oldSpace && heap.ceilingMiB <= oldSpace + 4,
        `heap_size_limit ${heap.ceilingMiB} MiB for an old space of ${oldSpace} MiB`,
      );
      assert.ok(heap.ceilingMiB < limitMiB - 90, "room for memory outside the JS heap");
    });
  }

  it("keeps an explicit --max-old-space-size from NODE_OPTIONS", async () => {
    const line = await startIn(1024 * MiB, {
      NODE_OPTIONS: "--max-semi-space-size=1 --max-old-space-size=200",
    });
    const heap = line.heap as { ceilingMiB: number; memoryLimitMiB?: number };
    assert.equal(heap.memoryLimitMiB, undefined);
    assert.ok(heap.ceilingMiB >= 200 && heap.ceilingMiB <= 204, `heap_size_limit ${heap.ceilingMiB} MiB`);
  });
});
