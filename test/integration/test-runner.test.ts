/**
 * The test runner of `make test` (test/support/runner.ts), run as a process on a file whose hook
 * hangs past the timeout with a child process running (test/support/runner-hung-file.ts): the
 * file ends, its child is stopped, and the run ends with its summary and its table of files
 * instead of waiting for the file for ever.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { CommandError, repoRoot, runCommand, trackTempDir, waitFor, within } from "../support/process.ts";

/** Whether `pid` is a process that still runs (not gone, not a zombie). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.charAt(stat.lastIndexOf(")") + 2) !== "Z";
  } catch {
    return false;
  }
}

describe("a test file that hangs past its timeout", () => {
  it("ends with its child process stopped, and the run ends with its summary", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-runner-test-"));
    trackTempDir(dir);
    const pidFile = path.join(dir, "pid");
    // A run of its own: not a child of this file's test runner.
    const env: NodeJS.ProcessEnv = { ...process.env, RUNNER_HUNG_FILE_PID: pidFile };
    delete env.NODE_TEST_CONTEXT;
    const args = [
      "test/support/runner.ts",
      "--concurrency=1",
      "--timeout=2000",
      "test/support/runner-hung-file.ts",
    ];
    const run = runCommand(process.execPath, args, { env, cwd: repoRoot }).then(
      (out) => ({ code: 0, ...out }),
      (err: unknown) => {
        if (!(err instanceof CommandError)) throw err;
        return { code: err.code, stdout: err.stdout, stderr: err.stderr };
      },
    );
    const { code, stdout } = await within("the run to end", run, 60_000);

    assert.equal(code, 1, stdout);
    assert.match(stdout, /test timed out after 2000ms/, "the timeout is reported");
    assert.match(stdout, /^ℹ fail 1$/m, "the run's summary");
    assert.match(stdout, /^slowest 1 of 1 test files/m, "the table of files at the run's end");
    assert.ok(existsSync(pidFile), "the file started its child");
    const pid = Number(readFileSync(pidFile, "utf8"));
    await waitFor(`the file's child ${pid} to be stopped`, async () => !running(pid), 5000);
  });
});
