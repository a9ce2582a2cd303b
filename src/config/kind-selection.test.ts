import assert from "node:assert/strict";
import { test } from "node:test";
import { parseKindSelection } from "./kind-selection.ts";
import { ValueError } from "./values.ts";

const NAMES = ["ec2instance", "s3bucket", "sqsqueue"];

test("* and empty text enable every kind, in the registry's order", () => {
  assert.deepEqual(parseKindSelection("*", NAMES), NAMES);
  assert.deepEqual(parseKindSelection("", NAMES), NAMES);
  assert.deepEqual(parseKindSelection(" , ", NAMES), NAMES);
});

test("names enable only those kinds, in the registry's order whatever the text's", () => {
  assert.deepEqual(parseKindSelection("sqsqueue,ec2instance", NAMES), ["ec2instance", "sqsqueue"]);
  assert.deepEqual(parseKindSelection(" s3bucket ", NAMES), ["s3bucket"]);
});

test("-name leaves a kind out of *, and wins over an enable of the same name in any order", () => {
  assert.deepEqual(parseKindSelection("*,-ec2instance", NAMES), ["s3bucket", "sqsqueue"]);
  assert.deepEqual(parseKindSelection("-ec2instance,*", NAMES), ["s3bucket", "sqsqueue"]);
  assert.deepEqual(parseKindSelection("s3bucket,sqsqueue,-s3bucket", NAMES), ["sqsqueue"]);
});

test("an unknown name is refused, naming it and the accepted names", () => {
  assert.throws(
    () => parseKindSelection("*,-ec2", NAMES),
    (err: unknown) =>
      err instanceof ValueError &&
      /"ec2" is no kind/.test(err.message) &&
      err.message.includes("ec2instance, s3bucket, sqsqueue"),
  );
});

test("a selection that leaves no kind is refused, with the hint for -name alone", () => {
  assert.throws(() => parseKindSelection("*,-ec2instance,-s3bucket,-sqsqueue", NAMES), /at least one kind/);
  assert.throws(() => parseKindSelection("-ec2instance", NAMES), /write \*,-<name>/);
});
