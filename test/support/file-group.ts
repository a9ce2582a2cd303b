/**
 * A group of test files run in one process (the runner's `--one-process`): this module, run as a
 * test file, imports each file named in {@link FILE_GROUP_ENV} in turn, so their tests run in
 * this process one after another, as `node --test --test-isolation=none` runs them.
 *
 * For files that start no process and share no state (the unit tests): a process of their own
 * each costs its start, which is most of what such a file costs. The tests are the same tests,
 * reported under their own names and locations.
 */
import { pathToFileURL } from "node:url";
import { FILE_GROUP_ENV, groupFiles } from "./runner.ts";

if (import.meta.main) {
  for (const file of groupFiles(process.env[FILE_GROUP_ENV])) await import(pathToFileURL(file).href);
}
