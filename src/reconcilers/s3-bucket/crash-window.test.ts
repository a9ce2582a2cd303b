import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CREATE_WINDOW_MS } from "../common/token.ts";
import type { S3BucketObject } from "./model.ts";
import { CLOCK_SKEW_MS, createdInWindow as createdIn, createWindow as windowOf } from "./crash-window.ts";
import { contextFor } from "../common/testing/context.ts";
import { bucketObject } from "./testing/objects.ts";

const CREATED = Date.parse("2026-03-01T10:00:00Z");
const REQUESTED = CREATED + 2_000;
const NOW = REQUESTED + 1_000;

function obj(status: S3BucketObject["status"] | undefined): S3BucketObject {
  return bucketObject({}, status, {
    creationTimestamp: new Date(CREATED).toISOString().replace(".000Z", "Z"),
  });
}

const intent = (over: Partial<NonNullable<S3BucketObject["status"]>> = {}): S3BucketObject =>
  obj({
    createToken: "uid-1-1",
    createAttempt: 1,
    createRequestedAt: new Date(REQUESTED).toISOString(),
    ...over,
  });

/** The window of `o` with the flow facts the flow derives from it. */
const createWindow = (o: S3BucketObject, now: number) => windowOf(o, contextFor(o, "bucketArn").flow, now);
const createdInWindow = (o: S3BucketObject, date: Date | undefined, now: number) =>
  createdIn(o, contextFor(o, "bucketArn").flow, date, now);

describe("createWindow", () => {
  it("opens from the later of creation and token time (less the skew) for the create window", () => {
    assert.deepEqual(createWindow(intent(), NOW), {
      from: REQUESTED - CLOCK_SKEW_MS,
      to: REQUESTED + CREATE_WINDOW_MS,
    });
  });

  it("never opens before the object existed, whatever status says", () => {
    const early = intent({ createRequestedAt: new Date(CREATED - 3_600_000).toISOString() });
    assert.equal(createWindow(early, NOW)?.from, CREATED - CLOCK_SKEW_MS);
  });

  it("is closed without a current token, once a bucket is recorded, or for a time in the future", () => {
    assert.equal(createWindow(obj(undefined), NOW), undefined);
    assert.equal(createWindow(obj({}), NOW), undefined);
    assert.equal(createWindow(intent({ createToken: "uid-2-1" }), NOW), undefined, "another object's token");
    assert.equal(createWindow(intent({ createAttempt: 2 }), NOW), undefined, "token of another attempt");
    assert.equal(createWindow(intent({ bucketArn: "arn:aws:s3:::assets-1" }), NOW), undefined);
    assert.equal(createWindow(intent({ createRequestedAt: undefined }), NOW), undefined);
    const future = intent({ createRequestedAt: new Date(NOW + CLOCK_SKEW_MS + 1000).toISOString() });
    assert.equal(createWindow(future, NOW), undefined);
  });
});

describe("createdInWindow", () => {
  it("takes a bucket created just after the token was recorded", () => {
    assert.equal(createdInWindow(intent(), new Date(REQUESTED + 500), NOW), true);
    assert.equal(
      createdInWindow(intent(), new Date(REQUESTED - CLOCK_SKEW_MS), NOW),
      true,
      "within the skew",
    );
    assert.equal(createdInWindow(intent(), new Date(REQUESTED - CLOCK_SKEW_MS - 1000), NOW), false);
  });

  it("refuses a bucket created before the create, long after it, or of unknown age", () => {
    assert.equal(createdInWindow(intent(), new Date(CREATED - 60_000), NOW), false);
    assert.equal(createdInWindow(intent(), new Date(REQUESTED + CREATE_WINDOW_MS + 1000), NOW), false);
    assert.equal(createdInWindow(intent(), undefined, NOW), false);
    assert.equal(createdInWindow(obj(undefined), new Date(REQUESTED), NOW), false);
  });
});
