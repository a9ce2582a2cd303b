/**
 * A process the tests start (test/support/process.ts startProcess): once its `exited` resolves,
 * everything it wrote is in its log file. A test reads its last lines there right after the exit
 * (an exit status's message, a fatal error), and the exit comes before the pipes have delivered
 * them.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { startProcess, trackTempDir, within } from "../support/process.ts";

describe("a started process's log", () => {
  it("holds every line the process wrote, on stdout and stderr, once it has exited", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-process-log-"));
    trackTempDir(dir);
    // Several MiB on stdout, written synchronously, then one last line on stderr, then exit 3:
    // far more than a pipe holds, so the exit comes while most of it is still on its way.
    const script = [
      "const line = 'x'.repeat(1023) + '\\n';",
      "for (let i = 0; i < 8192; i++) require('node:fs').writeSync(1, line);",
      "require('node:fs').writeSync(2, 'the last line\\n');",
      "process.exit(3);",
    ].join("\n");
    for (let run = 0; run < 3; run++) {
      const logFile = path.join(dir, `run-${run}.log`);
      const proc = startProcess(process.execPath, ["-e", script], { logFile });
      // This process busy for a while, as on a loaded machine: the child's exit and the rest of
      // its output are then all waiting together when the event loop comes back.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 400);
      assert.equal(await within("the process to exit", proc.exited), 3);
      const text = readFileSync(logFile, "utf8");
      assert.equal(text.length, 8192 * 1024 + "the last line\n".length, `run ${run}: the whole output`);
      // Two pipes: the stderr line may come before the end of stdout, never without it.
      assert.ok(text.includes("the last line\n"), `run ${run}: the last line`);
    }
  });
});
