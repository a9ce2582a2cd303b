/**
 * The shell commands a docs page gives its readers, for the tests that run them as written: the
 * page's ```sh blocks, the command lines in them, and bash to run them as a reader pasting them
 * would (errexit, pipefail), as a tracked child of the test process (process.ts runCommand).
 */
import { runCommand } from "./process.ts";

/** The ```sh blocks of `page`, each dedented as far as its fence (a list item indents both). */
export function shBlocks(page: string): string[] {
  return [...page.matchAll(/^( *)```sh\n([\s\S]*?)^ *```/gm)].map((m) =>
    (m[2] ?? "")
      .split("\n")
      .map((l) => l.slice((m[1] ?? "").length))
      .join("\n"),
  );
}

/** The command lines of `page`'s ```sh blocks: continuation lines joined, comments and blanks dropped. */
export function shCommands(page: string): string[] {
  return shBlocks(page).flatMap((block) =>
    block
      .replace(/\\\n\s*/g, "")
      .split("\n")
      .map((line) => line.trim())
      .filter((cmd) => cmd !== "" && !cmd.startsWith("#")),
  );
}

/**
 * Runs `script` with bash (errexit, pipefail) in `cwd`, with `env` over the test process's own;
 * resolves with its output, rejects with a CommandError (its exit code and output) when it fails.
 */
export function runBash(
  script: string,
  opts: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ stdout: string; stderr: string }> {
  return runCommand("bash", ["-eo", "pipefail", "-c", script], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
  });
}
