/**
 * A test file that hangs past its timeout with a child process running, run by runner.test.ts:
 * its `before` hook starts a command under the watchdog (which writes its pid to the file named
 * by RUNNER_HUNG_FILE_PID) and then never ends. Nothing in the file ever stops the command, so
 * the file's process stays alive unless the runner ends it.
 */
import { before, it } from "node:test";
import { startProcess } from "./process.ts";

before(async () => {
  const pidFile = process.env.RUNNER_HUNG_FILE_PID ?? "";
  startProcess("sh", ["-c", 'echo $$ > "$0"; exec sleep 600', pidFile], { logFile: "/dev/null" });
  await new Promise<never>(() => undefined);
});

it("never runs: the hook before it does not end", () => undefined);
