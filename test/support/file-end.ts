/**
 * Loaded into the process of every test file (`--import`: the runner's `execArgv`, and the
 * Makefile's `node --test` targets), so that a file's process always ends once its tests have
 * ended.
 *
 * A test or hook that times out leaves its work behind: node:test stops waiting for it, and
 * nothing stops it (a cluster it was starting, a build). That work keeps the file's event loop,
 * and so the whole run, alive for ever. Here, once the file's tests have ended (the root `after`
 * hook runs after every test and hook of the file, a timed-out one included), the process has
 * {@link FILE_END_GRACE_MS} to end by itself. After that it exits with the code node:test gave
 * it, and its exit stops every child process it started (process.ts) and removes its cluster
 * (cluster.ts).
 *
 * Not node:test's own `forceExit` (`--test-force-exit`): with several files at a time it ends a
 * file's process while results are still on their way to the runner, which then counts fewer
 * tests than ran, failures included, and passes (nodejs/node#64833). The grace here starts only
 * after the file's last result.
 */
import { after } from "node:test";

/** How long a file's process may go on after its tests have ended. */
export const FILE_END_GRACE_MS = 5000;

// Only in a test file's own process: node:test marks it with NODE_TEST_CONTEXT. A `node --test`
// that runs the files is not one, and gets no hook of its own.
if (process.env.NODE_TEST_CONTEXT !== undefined) {
  after(() => {
    const timer = setTimeout(() => {
      process.stderr.write(
        `test file still running ${FILE_END_GRACE_MS / 1000} s after its tests ended ` +
          "(a test or hook that timed out left work running): stopping its child processes and exiting\n",
      );
      process.exit();
    }, FILE_END_GRACE_MS);
    // Never the reason the process stays: a file that ends by itself ends at once.
    timer.unref();
  });
}
