/**
 * A process the tests start (test/support/process.ts startProcess), under hack/watchdog.sh in a
 * process group of its own:
 * - once its `exited` resolves, everything it wrote is in its log file. A test reads its last
 *   lines there right after the exit (an exit status's message, a fatal error), and the exit comes
 *   before the pipes have delivered them;
 * - stopping it signals the group, and the command gets the signal once, as a pod's process gets
 *   one SIGTERM from the kubelet. The operator takes a second SIGTERM as "exit at once" and would
 *   skip its graceful shutdown.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { startProcess, trackTempDir, waitFor, within, type Supervised } from "../support/process.ts";

/** Runs `script` with this Node under the watchdog, its output in `run-<run>.log` of a new folder. */
function runScript(script: string[]): (run: number) => Supervised {
  const dir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-process-"));
  trackTempDir(dir);
  return (run) =>
    startProcess(process.execPath, ["-e", script.join("\n")], { logFile: path.join(dir, `run-${run}.log`) });
}

describe("a started process's log", () => {
  it("holds every line the process wrote, on stdout and stderr, once it has exited", async () => {
    // Several MiB on stdout, written synchronously, then one last line on stderr, then exit 3:
    // far more than a pipe holds, so the exit comes while most of it is still on its way.
    const start = runScript([
      "const line = 'x'.repeat(1023) + '\\n';",
      "for (let i = 0; i < 8192; i++) require('node:fs').writeSync(1, line);",
      "require('node:fs').writeSync(2, 'the last line\\n');",
      "process.exit(3);",
    ]);
    for (let run = 0; run < 3; run++) {
      const proc = start(run);
      // This process busy for a while, as on a loaded machine: the child's exit and the rest of
      // its output are then all waiting together when the event loop comes back.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 400);
      assert.equal(await within("the process to exit", proc.exited), 3);
      const text = readFileSync(proc.logFile, "utf8");
      assert.equal(text.length, 8192 * 1024 + "the last line\n".length, `run ${run}: the whole output`);
      // Two pipes: the stderr line may come before the end of stdout, never without it.
      assert.ok(text.includes("the last line\n"), `run ${run}: the last line`);
    }
  });
});

describe("a started process's signals", () => {
  it("stop() delivers SIGTERM to the command once, and the command ends as it chooses", async () => {
    // Counts SIGTERMs for 300 ms after the first, then exits 0 with the count as its last line.
    const start = runScript([
      "let n = 0;",
      "process.on('SIGTERM', () => {",
      "  if (++n === 1) setTimeout(() => { console.log(`terms=${n}`); process.exit(0); }, 300);",
      "});",
      "console.log('ready');",
      "setInterval(() => {}, 1000);",
    ]);
    for (let run = 0; run < 5; run++) {
      const proc = start(run);
      await waitFor(
        "the command to be ready",
        async () => readFileSync(proc.logFile, "utf8").includes("ready\n"),
        20_000,
      );
      await proc.stop();
      assert.equal(await within("the process to exit", proc.exited), 0, `run ${run}: exit status`);
      assert.match(readFileSync(proc.logFile, "utf8"), /^terms=1$/m, `run ${run}: SIGTERMs received`);
    }
  });
});
