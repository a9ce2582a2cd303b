/**
 * The SqsQueue layer over {@link ReconcilerEnv}: the kind's defaults and mutating operations, and
 * queue lookups through an SQS client talking to moto directly (not counted by the proxy).
 */
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueueTagsCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import type { SqsQueue } from "../../src/api/v1/index.ts";
import { ReconcilerEnv, type EnvOptions, type Served } from "../support/reconciler-env.ts";

/** An SqsQueue as served. */
export type QueueObj = Served<SqsQueue>;

/** A running environment for the SqsQueue tests of one file. */
export class SqsEnv extends ReconcilerEnv<QueueObj> {
  /**
   * @param operatorArgs operator flags after the environment's own
   * @param opts the rest of the environment's options
   */
  constructor(ns: string, operatorArgs: string[] = [], opts: Omit<EnvOptions, "ns" | "operatorArgs"> = {}) {
    super(
      {
        kind: "SqsQueue",
        plural: "sqsqueues",
        controller: "sqsqueue",
        mutating: ["CreateQueue", "SetQueueAttributes", "TagQueue", "UntagQueue", "DeleteQueue"],
        defaults: (name) => ({ region: "us-east-1", queueName: name }),
      },
      { ...opts, ns, operatorArgs },
    );
  }

  /** An SQS client talking to moto directly. */
  sqs(region = "us-east-1"): SQSClient {
    return this.client(region, (config) => new SQSClient(config));
  }

  async queueExists(queueName: string, region = "us-east-1"): Promise<boolean> {
    try {
      await this.sqs(region).send(new GetQueueUrlCommand({ QueueName: queueName }));
      return true;
    } catch (err) {
      if ((err as Error).name === "QueueDoesNotExist") return false;
      throw err;
    }
  }

  /** The queue's URL, attributes and tags; rejects with QueueDoesNotExist when there is none. */
  async queue(
    queueName: string,
    region = "us-east-1",
  ): Promise<{ url: string; attributes: Record<string, string>; tags: Record<string, string> }> {
    const sqs = this.sqs(region);
    const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }))).QueueUrl;
    const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }));
    const tags = await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }));
    return { url: url ?? "", attributes: attrs.Attributes ?? {}, tags: tags.Tags ?? {} };
  }
}
