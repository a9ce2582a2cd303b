/**
 * Whether a module is the program's entry point, by a rule every supported Node.js honours
 * (`import.meta.main` exists only from Node.js 24.2): the module's URL is that of the script Node
 * was started with, once symbolic links are resolved (npm's bin link, /usr/local/bin), as Node
 * resolves them when it loads the main module. Holds for the tsc output, the sources and the
 * esbuild bundle alike, where the bundle's own URL stands for every module in it.
 */
import { realpathSync } from "node:fs";
import { isSea } from "node:sea";
import { pathToFileURL } from "node:url";

/**
 * Whether the module at `moduleUrl` is the script `argv1` (`process.argv[1]`) names. In a single
 * executable application (hack/sea.ts) the embedded script is the program, and argv[1] only the
 * name it was run by (`kubectl-kp`, found through PATH): there it always is.
 */
export function isEntryPoint(
  moduleUrl: string,
  argv1: string | undefined = process.argv[1],
  sea: boolean = isSea(),
): boolean {
  if (sea) return true;
  if (argv1 === undefined || argv1 === "") return false;
  let script: string;
  try {
    script = realpathSync(argv1);
  } catch {
    return false;
  }
  return pathToFileURL(script).href === moduleUrl;
}
