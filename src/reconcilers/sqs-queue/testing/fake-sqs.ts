/**
 * SQS in memory, for the unit tests of the SqsQueue driver: the queue calls the driver makes,
 * answered the way SQS answers them, every call logged.
 */
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ListQueueTagsCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
  UntagQueueCommand,
} from "@aws-sdk/client-sqs";
import { AwsError, type AwsErrorKind } from "../../../aws/errors.ts";

const MUTATING = new Set(["CreateQueue", "SetQueueAttributes", "TagQueue", "UntagQueue", "DeleteQueue"]);

export interface FakeQueue {
  attributes: Record<string, string>;
  tags: Record<string, string>;
}

/**
 * SQS in memory, per region, answering the commands the driver sends the way SQS does
 * (including CreateQueue returning an existing queue's URL when the attributes match).
 */
export class FakeSqs {
  readonly queues = new Map<string, FakeQueue>();
  readonly calls: { op: string; input: Record<string, unknown> }[] = [];
  readonly region: string;
  constructor(region: string) {
    this.region = region;
  }
  url(name: string): string {
    return `https://sqs.${this.region}.amazonaws.com/123456789012/${name}`;
  }
  mutations(): string[] {
    return this.calls.map((c) => c.op).filter((op) => MUTATING.has(op));
  }
  #fail(kind: AwsErrorKind, code: string, operation: string): never {
    throw new AwsError({
      kind,
      code,
      service: "sqs",
      operation,
      message: `SQS ${operation} failed with ${code}`,
    });
  }
  #byUrl(url: unknown, op: string): FakeQueue {
    const name = String(url).split("/").pop() ?? "";
    const q = String(url) === this.url(name) ? this.queues.get(name) : undefined;
    return q ?? this.#fail("not-found", "QueueDoesNotExist", op);
  }
  async send(cmd: { input: Record<string, unknown> }): Promise<unknown> {
    const input = cmd.input;
    const op = cmd.constructor.name.replace(/Command$/, "");
    this.calls.push({ op, input });
    await Promise.resolve();
    if (cmd instanceof CreateQueueCommand) {
      const name = cmd.input.QueueName ?? "";
      const attrs = cmd.input.Attributes ?? {};
      const existing = this.queues.get(name);
      if (existing !== undefined) {
        for (const [k, v] of Object.entries(attrs)) {
          if (existing.attributes[k] !== v) this.#fail("conflict", "QueueNameExists", op);
        }
        return { QueueUrl: this.url(name) };
      }
      this.queues.set(name, {
        attributes: {
          QueueArn: `arn:aws:sqs:${this.region}:123456789012:${name}`,
          DelaySeconds: "0",
          ...attrs,
        },
        tags: { ...(cmd.input.tags ?? {}) },
      });
      return { QueueUrl: this.url(name) };
    }
    if (cmd instanceof GetQueueUrlCommand) {
      const name = cmd.input.QueueName ?? "";
      if (!this.queues.has(name)) this.#fail("not-found", "QueueDoesNotExist", op);
      return { QueueUrl: this.url(name) };
    }
    if (cmd instanceof ListQueuesCommand) {
      // Pages of at most MaxResults (1-1000) queues by name; without MaxResults, up to 1000 and
      // no NextToken, as SQS answers.
      const prefix = cmd.input.QueueNamePrefix ?? "";
      const names = [...this.queues.keys()].filter((n) => n.startsWith(prefix)).sort();
      const max = cmd.input.MaxResults;
      const start = cmd.input.NextToken !== undefined ? Number(cmd.input.NextToken) : 0;
      const end = start + (max ?? 1000);
      return {
        QueueUrls: names.slice(start, end).map((n) => this.url(n)),
        ...(max !== undefined && end < names.length ? { NextToken: String(end) } : {}),
      };
    }
    if (cmd instanceof GetQueueAttributesCommand)
      return { Attributes: { ...this.#byUrl(input.QueueUrl, op).attributes } };
    if (cmd instanceof ListQueueTagsCommand) return { Tags: { ...this.#byUrl(input.QueueUrl, op).tags } };
    if (cmd instanceof SetQueueAttributesCommand) {
      Object.assign(this.#byUrl(input.QueueUrl, op).attributes, cmd.input.Attributes);
      return {};
    }
    if (cmd instanceof TagQueueCommand) {
      Object.assign(this.#byUrl(input.QueueUrl, op).tags, cmd.input.Tags);
      return {};
    }
    if (cmd instanceof UntagQueueCommand) {
      const q = this.#byUrl(input.QueueUrl, op);
      for (const k of cmd.input.TagKeys ?? []) delete q.tags[k];
      return {};
    }
    if (cmd instanceof DeleteQueueCommand) {
      const q = this.#byUrl(input.QueueUrl, op);
      for (const [name, v] of this.queues) if (v === q) this.queues.delete(name);
      return {};
    }
    throw new Error(`unexpected command ${op}`);
  }
}
