/**
 * A module hook for the operator's process, loaded with `--import`: appends the URL of every
 * module the process loads, one per line, to the file `$MODULE_LOG_FILE`. Tests read it to see
 * which of the bundle's chunks an operator parsed.
 */
import { appendFileSync } from "node:fs";
import { registerHooks } from "node:module";

const file = process.env.MODULE_LOG_FILE;
if (file !== undefined && file !== "") {
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(file, `${url}\n`);
      return nextLoad(url, context);
    },
  });
}
