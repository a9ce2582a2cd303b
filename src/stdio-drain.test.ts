import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const MODULE = fileURLToPath(new URL("./stdio-drain.ts", import.meta.url));
const LINES = 40_000;
const LINE = `${"x".repeat(99)}\n`;

/**
 * A process that writes 4 MB to its standard error, far beyond what a pipe holds, reports on
 * standard output how much still waited in the stream, and exits at once after `drained`.
 */
const CHILD = `
import { drained } from ${JSON.stringify(MODULE)};
for (let i = 0; i < ${LINES}; i++) process.stderr.write(${JSON.stringify(LINE)});
process.stdout.write(String(process.stderr.writableLength) + "\\n");
await drained(process.stdout, process.stderr);
process.exit(0);
`;

describe("drained", () => {
  it("lets a process exit at once without losing what waits for a slow reader of its pipes", async () => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let errBytes = 0;
    child.stdout.on("data", (b: Buffer) => (out += b.toString("utf8")));
    child.stderr.on("data", (b: Buffer) => (errBytes += b.length));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    assert.equal(code, 0);
    // The case this guards: data still waited in the stream when the process asked to exit.
    assert.ok(
      Number(out.trim()) > 0,
      `nothing waited in the stream (${out.trim()}): the test proves nothing`,
    );
    assert.equal(errBytes, LINES * LINE.length);
  });
});
