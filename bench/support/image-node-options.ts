/** What the image sets for the operator's node process: the Dockerfile's `NODE_OPTIONS` and `MALLOC_` variables. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../../test/support/process.ts";

/** The Dockerfile's `ENV NODE_OPTIONS="..."`, as one string ("" when it sets none). */
export function imageNodeOptions(): string {
  const m = /^ENV NODE_OPTIONS="([^"]*)"$/m.exec(readFileSync(path.join(repoRoot, "Dockerfile"), "utf8"));
  return m?.[1] ?? "";
}

/** The allocator settings the image's environment sets (`ENV MALLOC_...` in the Dockerfile), as NAME=value. */
export function imageAllocatorEnv(): string[] {
  const dockerfile = readFileSync(path.join(repoRoot, "Dockerfile"), "utf8");
  return [...dockerfile.matchAll(/^ENV (MALLOC_[A-Z_]+=\S+)$/gm)].map((m) => m[1] ?? "");
}
