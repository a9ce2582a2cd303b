import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseQueueAddress, QueueAddressError } from "./queue-address.ts";

describe("parseQueueAddress", () => {
  it("takes a regional queue URL as it is", () => {
    assert.deepEqual(parseQueueAddress("https://sqs.eu-west-1.amazonaws.com/123456789012/kp-events"), {
      url: "https://sqs.eu-west-1.amazonaws.com/123456789012/kp-events",
      region: "eu-west-1",
      accountId: "123456789012",
      name: "kp-events",
    });
  });

  it("reads the region of legacy URLs", () => {
    assert.equal(parseQueueAddress("https://queue.amazonaws.com/123456789012/q").region, "us-east-1");
    assert.equal(
      parseQueueAddress("https://us-west-2.queue.amazonaws.com/123456789012/q").region,
      "us-west-2",
    );
  });

  it("converts an ARN to the URL of the region's endpoint, in its partition", () => {
    assert.equal(
      parseQueueAddress("arn:aws:sqs:us-east-2:123456789012:kp-events").url,
      "https://sqs.us-east-2.amazonaws.com/123456789012/kp-events",
    );
    assert.equal(
      parseQueueAddress("arn:aws-cn:sqs:cn-north-1:123456789012:kp-events").url,
      "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/kp-events",
    );
    assert.equal(
      parseQueueAddress("arn:aws-us-gov:sqs:us-gov-west-1:123456789012:kp.fifo").url,
      "https://sqs.us-gov-west-1.amazonaws.com/123456789012/kp.fifo",
    );
  });

  it("refuses an ARN whose partition does not hold its region", () => {
    assert.throws(
      () => parseQueueAddress("arn:aws:sqs:cn-north-1:123456789012:q"),
      /partition aws, but cn-north-1 is in aws-cn/,
    );
  });

  it("takes an emulator's URL with the operator's region", () => {
    assert.deepEqual(parseQueueAddress("http://127.0.0.1:5000/123456789012/events", "us-east-1"), {
      url: "http://127.0.0.1:5000/123456789012/events",
      region: "us-east-1",
      accountId: "123456789012",
      name: "events",
    });
    assert.throws(() => parseQueueAddress("http://127.0.0.1:5000/123456789012/events"), /names no region/);
  });

  it("refuses a queue name alone, saying what to give instead", () => {
    assert.throws(
      () => parseQueueAddress("kp-events"),
      (err: unknown) =>
        err instanceof QueueAddressError &&
        /queue name alone, which says neither its account nor its region: give an SQS queue URL/.test(
          err.message,
        ),
    );
  });

  it("refuses what is neither", () => {
    assert.throws(
      () => parseQueueAddress("arn:aws:sns:us-east-1:123456789012:topic"),
      /not an SQS queue ARN/,
    );
    assert.throws(
      () => parseQueueAddress("https://sqs.us-east-1.amazonaws.com/kp-events"),
      /no \/<12-digit account>\/<queue name> path/,
    );
    assert.throws(() => parseQueueAddress("a b"), /is not an SQS queue URL/);
  });
});
