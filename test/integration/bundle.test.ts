/**
 * The image's entry point, the esbuild bundle of hack/bundle.ts: it runs the operator on its own
 * (no node_modules beside it), serves an S3Bucket through the SDK code it kept, and has left out
 * the SDK shapes of operations the operator never calls.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { bundle } from "../../hack/bundle.ts";
import { OWNERSHIP_TAGS } from "../../src/api/v1/index.ts";
import { trackTempDir } from "../support/process.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "kubeprovisioner-bundle-"));
trackTempDir(dir);
const entry = path.join(dir, "kubeprovisioner.mjs");
await bundle(entry);

describe("the bundled operator", () => {
  const env = new S3Env("bundle", { operatorEntry: entry }).hooks();

  it("creates a bucket and reports it Ready", async () => {
    const created = await env.create("bundle-assets", { versioning: true, tags: { team: "a" } });
    await env.waitReady("bundle-assets");
    assert.equal(await env.bucketExists("bundle-assets"), true);
    assert.equal(await env.versioning("bundle-assets"), "Enabled");
    const tags = await env.bucketTags("bundle-assets");
    assert.equal(tags.team, "a");
    assert.equal(tags[OWNERSHIP_TAGS.uid], created.metadata.uid);
  });

  it("keeps only the SDK shapes of operations the operator calls", () => {
    const code = readFileSync(entry, "utf8");
    assert.match(code, /"DescribeInstancesRequest"/);
    assert.match(code, /"RunInstancesRequest"/);
    assert.doesNotMatch(code, /"WithdrawByoipCidrRequest"/);
    assert.doesNotMatch(code, /"CreateVpnConnectionRequest"/);
  });
});
