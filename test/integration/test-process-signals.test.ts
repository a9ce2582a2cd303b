/**
 * A process the tests start (test/support/process.ts startProcess) runs under hack/watchdog.sh in
 * a process group of its own. Stopping it signals the group: the command must get the signal once,
 * as a pod's process gets one SIGTERM from the kubelet. The operator takes a second SIGTERM as
 * "exit at once" and would skip its graceful shutdown.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { startProcess, trackTempDir, waitFor, within } from "../support/process.ts";

describe("a started process's signals", () => {
  it("stop() delivers SIGTERM to the command once, and the command ends as it chooses", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-process-signals-"));
    trackTempDir(dir);
    // Counts SIGTERMs for 300 ms after the first, then exits 0 with the count as its last line.
    const script = [
      "let n = 0;",
      "process.on('SIGTERM', () => {",
      "  if (++n === 1) setTimeout(() => { console.log(`terms=${n}`); process.exit(0); }, 300);",
      "});",
      "console.log('ready');",
      "setInterval(() => {}, 1000);",
    ].join("\n");
    for (let run = 0; run < 5; run++) {
      const logFile = path.join(dir, `run-${run}.log`);
      const proc = startProcess(process.execPath, ["-e", script], { logFile });
      await waitFor(
        "the command to be ready",
        async () => readFileSync(logFile, "utf8").includes("ready\n"),
        20_000,
      );
      await proc.stop();
      assert.equal(await within("the process to exit", proc.exited), 0, `run ${run}: exit status`);
      assert.match(readFileSync(logFile, "utf8"), /^terms=1$/m, `run ${run}: SIGTERMs received`);
    }
  });
});
