import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError } from "../config/config-error.ts";
import { parseAdoptArgs } from "./adopt.ts";

describe("parseAdoptArgs", () => {
  it("needs a selector, takes a namespace or all of them, and a dry run", () => {
    assert.deepEqual(parseAdoptArgs(["-l", "compute.cloud.com/export=estate", "-n", "shop", "--dry-run"]), {
      help: false,
      selector: "compute.cloud.com/export=estate",
      namespace: "shop",
      allNamespaces: false,
      dryRun: true,
      kubeconfig: undefined,
    });
    assert.equal(parseAdoptArgs(["-l", "a=b", "-A"]).allNamespaces, true);
    assert.equal(parseAdoptArgs(["--help"]).help, true);
  });

  it("refuses what does not go together", () => {
    assert.throws(() => parseAdoptArgs([]), /give -l SELECTOR/);
    assert.throws(() => parseAdoptArgs(["-l", "a=b", "-A", "-n", "x"]), ConfigError);
    assert.throws(() => parseAdoptArgs(["-l", "a=b", "--bogus"]), /Unknown option/);
  });
});
