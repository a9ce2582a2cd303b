/**
 * The operator program the tests run. Under `make test` it is the esbuild bundle the image runs
 * (hack/bundle.ts), built from the working tree once per run by the test runner's global setup
 * (global-setup.ts): an operator starts from it in about a third of the CPU time of the sources,
 * and tests start some two hundred. A test file run on its own (`node --test <file>`) runs the
 * sources, so it never sees a stale build.
 *
 * A file whose point is the sources (`make dev` runs them) names {@link SOURCE_PROGRAM} itself.
 */
import path from "node:path";
import { repoRoot } from "./process.ts";

/** Set by the runner's global setup to the bundle it built; unset, the sources run. */
export const OPERATOR_PROGRAM_ENV = "KUBEPROVISIONER_TEST_OPERATOR_PROGRAM";

/** The sources' entry point, as `make dev` runs it. */
export const SOURCE_PROGRAM = path.join(repoRoot, "src/main.ts");

/** The entry point of the operator program under test: see the module comment. */
export function operatorProgram(): string {
  const built = process.env[OPERATOR_PROGRAM_ENV];
  return built !== undefined && built !== "" ? built : SOURCE_PROGRAM;
}
