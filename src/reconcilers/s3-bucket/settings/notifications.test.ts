import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { callsAnswering } from "../testing/bucket-calls.ts";
import { notifications } from "./notifications.ts";

describe("notifications as S3 takes and gives them", () => {
  const queue = {
    id: "q",
    queueArn: "arn:aws:sqs:eu-west-1:123456789012:q",
    events: ["s3:ObjectCreated:*"],
    prefix: "",
    suffix: "",
  };
  const put = async (eventBridge: boolean | undefined) => {
    const { s3, calls } = callsAnswering();
    await notifications.write(s3, { queues: [queue], otherDestinations: 0, eventBridge });
    return (calls[0]?.input as { NotificationConfiguration: Record<string, unknown> })
      .NotificationConfiguration;
  };

  it("writes the queues and EventBridge in one configuration, EventBridge as an empty element", async () => {
    const on = await put(true);
    assert.deepEqual(on.EventBridgeConfiguration, {});
    assert.equal((on.QueueConfigurations as unknown[]).length, 1);
    assert.equal("EventBridgeConfiguration" in (await put(false)), false);
  });

  it("reads EventBridge from the empty element S3 answers, and counts only topics and functions as others", async () => {
    const read = async (answer: unknown) => await notifications.read(callsAnswering(answer).s3);
    assert.deepEqual(await read({ EventBridgeConfiguration: {} }), {
      queues: [],
      otherDestinations: 0,
      eventBridge: true,
    });
    assert.deepEqual(
      await read({ TopicConfigurations: [{ TopicArn: "arn:aws:sns:eu-west-1:123456789012:t", Events: [] }] }),
      { queues: [], otherDestinations: 1, eventBridge: false },
    );
  });

  it("leaves the queues unset in an export when one takes an event the API does not list", () => {
    const refs = { region: "eu-west-1", refOf: () => undefined };
    const spec = notifications.specOf(
      {
        queues: [{ ...queue, events: ["s3:ObjectAnnotation:Put", "s3:ObjectCreated:*"] }],
        otherDestinations: 0,
        eventBridge: false,
      },
      refs,
    );
    assert.deepEqual(spec.fields, {});
    assert.deepEqual(spec.omitted, [
      "notifications: events the API does not list, s3:ObjectAnnotation:Put (spec.notifications left unset)",
    ]);
    const listed = notifications.specOf({ queues: [queue], otherDestinations: 0, eventBridge: false }, refs);
    assert.deepEqual(listed.omitted, []);
    assert.ok("notifications" in listed.fields);
  });

  it("shows in a plan the queues as the spec writes them, and other destinations by their count", () => {
    assert.deepEqual(
      notifications.toSpec({
        queues: [{ ...queue, prefix: "in/" }],
        otherDestinations: 2,
        eventBridge: false,
      }),
      {
        queues: [
          { id: "q", queueArn: queue.queueArn, events: ["s3:ObjectCreated:*"], filter: { prefix: "in/" } },
        ],
        eventBridge: false,
        otherDestinations: 2,
      },
    );
  });
});
