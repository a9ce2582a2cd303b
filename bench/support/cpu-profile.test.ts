import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, describe, it } from "node:test";
import { busyShares, type CpuProfile, groupOf, longestProfile, packageOf } from "./cpu-profile.ts";

describe("packageOf and groupOf", () => {
  const root = "/repo";
  const cases: [string, string, string][] = [
    ["../src/runtime/controller/controller.ts", "src", "operator (src)"],
    ["../../src/aws/clients.ts", "src", "operator (src)"],
    ["/repo/src/main.ts", "src", "operator (src)"],
    ["../../node_modules/@smithy/core/dist-es/x.js", "@smithy/core", "AWS SDK"],
    ["../node_modules/@aws-sdk/client-s3/dist-es/x.js", "@aws-sdk/client-s3", "AWS SDK"],
    ["/repo/node_modules/@aws-crypto/crc32/x.js", "@aws-crypto/crc32", "AWS SDK"],
    ["../node_modules/a/node_modules/@smithy/types/x.js", "@smithy/types", "AWS SDK"],
    ["../node_modules/prom-client/lib/registry.js", "prom-client", "prom-client"],
    ["../node_modules/tdigest/tdigest.js", "tdigest", "prom-client"],
    ["../node_modules/pino/lib/proto.js", "pino", "pino"],
    ["../node_modules/sonic-boom/index.js", "sonic-boom", "pino"],
    ["node:internal/http", "node", "Node internals"],
    ["builtin:http", "node", "Node internals"],
    ["../node_modules/yaml/dist/index.js", "yaml", "other"],
    ["/repo/bench/noop/noop.ts", "bench/noop/noop.ts", "other"],
    // A package's own src/ folder is the package's, not the operator's.
    ["../node_modules/somepkg/src/index.js", "somepkg", "other"],
  ];
  for (const [file, pkg, group] of cases)
    it(`${file} is ${pkg}, in ${group}`, () => {
      assert.equal(packageOf(file, root), pkg);
      assert.equal(groupOf(pkg), group);
    });
});

describe("busyShares", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "cpu-profile-test-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, "dist/chunks"), { recursive: true });
  // The entry: line 0 the bundler's banner, line 1 from src/, from column 10 on the SDK.
  writeFileSync(
    path.join(dir, "dist/entry.mjs"),
    "banner;\nsrc(); sdk();\n//# sourceMappingURL=entry.mjs.map\n",
  );
  writeFileSync(
    path.join(dir, "dist/entry.mjs.map"),
    JSON.stringify({
      version: 3,
      sources: ["../src/a.ts", "../node_modules/@smithy/core/x.js"],
      mappings: ";AAAA,UCAA",
    }),
  );
  // A chunk with its own map: line 0 from prom-client. Its line 1 (no map segment of its own)
  // would be the SDK's by the entry's map: the chunk's map must decide.
  writeFileSync(path.join(dir, "dist/chunks/c.mjs"), "prom();\nmore();\n//# sourceMappingURL=c.mjs.map\n");
  writeFileSync(
    path.join(dir, "dist/chunks/c.mjs.map"),
    JSON.stringify({ version: 3, sources: ["../../node_modules/prom-client/lib/x.js"], mappings: "AAAA" }),
  );
  // A script with no map: its own path is the source.
  writeFileSync(path.join(dir, "plain.mjs"), "x();\n");
  const url = (f: string): string => pathToFileURL(path.join(dir, f)).href;
  const frame = (functionName: string, u = "", lineNumber = 0, columnNumber = 0) => ({
    functionName,
    url: u,
    lineNumber,
    columnNumber,
  });
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame("(root)"), children: [2, 3, 4, 5, 7, 8, 9, 10, 11, 12] },
      { id: 2, callFrame: frame("(program)") },
      { id: 3, callFrame: frame("(idle)") },
      { id: 4, callFrame: frame("(garbage collector)") },
      { id: 5, callFrame: frame("send", url("dist/entry.mjs"), 1, 12), children: [6] },
      // V8's JSON.parse, called by the SDK: the SDK's.
      { id: 6, callFrame: frame("parse") },
      { id: 7, callFrame: frame("reconcile", url("dist/entry.mjs"), 1, 2) },
      { id: 8, callFrame: frame("write", "node:net", 10, 3) },
      { id: 9, callFrame: frame("observe", url("dist/chunks/c.mjs"), 1, 0) },
      // A helper of the bundler's on the banner line, and the entry's module top level.
      { id: 10, callFrame: frame("__esm", url("dist/entry.mjs"), 0, 3) },
      { id: 11, callFrame: frame("main", url("plain.mjs"), 0, 0) },
      { id: 12, callFrame: frame("", url("dist/entry.mjs"), 0, 0) },
    ],
    startTime: 1000,
    endTime: 2000,
    //         not busy     GC  SDK  SDK  src src node prom other other other
    samples: [2, 3, 2, 3, 4, 5, 6, 7, 7, 8, 9, 10, 11, 12],
    timeDeltas: [10, 10, 10, 10, 100, 100, 100, 100, 100, 100, 100, 100, 50, 50],
  };

  it("charges each busy sample by its frame's own source map and leaves idle and program out", () => {
    const s = busyShares(profile, { root: dir });
    assert.equal(s.busySamples, 10);
    assert.deepEqual(s.percent, {
      "operator (src)": 20,
      "AWS SDK": 20,
      "Node internals": 10,
      GC: 10,
      "prom-client": 10,
      pino: 0,
      other: 30,
    });
    assert.deepEqual(s.topPackages, {
      "@smithy/core": 20,
      src: 20,
      "(bundler code)": 10,
      "(module top level)": 10,
      "(gc)": 10,
      "node:net": 10,
      "plain.mjs": 10,
      "prom-client": 10,
    });
  });

  it("counts only the samples within the window", () => {
    // Sample times: 1010, 1020, 1030, 1040, 1140 (GC), 1240, 1340, 1440, 1540, 1640, ...
    const s = busyShares(profile, { root: dir, window: { fromUs: 1200, toUs: 1450 } });
    assert.equal(s.busySamples, 3);
    assert.deepEqual(
      Object.entries(s.percent).filter(([, v]) => v > 0),
      [
        ["operator (src)", 33.3],
        ["AWS SDK", 66.7],
      ],
    );
  });

  it("picks the profile of the longest-running process image", () => {
    const profs = path.join(dir, "prof");
    mkdirSync(profs);
    const short: CpuProfile = { ...profile, startTime: 0, endTime: 500 };
    writeFileSync(path.join(profs, "CPU.1.cpuprofile"), JSON.stringify(short));
    writeFileSync(path.join(profs, "CPU.2.cpuprofile"), JSON.stringify(profile));
    writeFileSync(path.join(profs, "notes.txt"), "not a profile");
    assert.equal(longestProfile(profs)?.file, path.join(profs, "CPU.2.cpuprofile"));
    assert.equal(longestProfile(path.join(dir, "dist/chunks")), undefined);
  });
});
