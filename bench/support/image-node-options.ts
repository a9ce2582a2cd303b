/** The V8 flags the image runs the operator with: `NODE_OPTIONS` of the Dockerfile. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../../test/support/process.ts";

/** The Dockerfile's `ENV NODE_OPTIONS="..."`, as one string ("" when it sets none). */
export function imageNodeOptions(): string {
  const m = /^ENV NODE_OPTIONS="([^"]*)"$/m.exec(readFileSync(path.join(repoRoot, "Dockerfile"), "utf8"));
  return m?.[1] ?? "";
}
