/**
 * Reads one change-event queue: a few receivers long-poll it (ReceiveMessage, 20 s wait, up to
 * 10 messages), each message is handed to `handle` (which enqueues the objects it concerns, or
 * says why it is dropped), and a message is deleted (DeleteMessageBatch) only once it was handled
 * that way. A message whose objects could not be enqueued yet stays in the queue and comes back
 * after its visibility timeout, at most {@link MAX_RECEIVES} times; then it is dropped as
 * undeliverable. So nothing is retried forever, and no message is lost before its key is queued.
 *
 * The queue is healthy from its first successful read until a read fails, and healthy again only
 * after a read sent after that failure succeeds; each change is reported through `onHealth`. Failed reads are retried with a doubling backoff up to a minute.
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
} from "@aws-sdk/client-sqs";
import type { AwsClientSource } from "../aws/clients.ts";
import { AwsError, NoPermitYetError } from "../aws/errors.ts";
import type { QueueAddress } from "../aws/queue-address.ts";
import type { AwsClientOf } from "../aws/service.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/logging.ts";
import type { ChangeEventMetrics, DropReason } from "./metrics.ts";

/** What became of one message. */
export type Handled =
  | { readonly outcome: "enqueued" }
  | { readonly outcome: "dropped"; readonly reason: DropReason }
  | { readonly outcome: "retry" };

/** Long-poll wait, the most SQS allows. */
export const WAIT_TIME_SECONDS = 20;
/** Messages per receive, the most SQS allows. */
export const MAX_MESSAGES = 10;
/** Receives of one message before it counts as undeliverable. */
export const MAX_RECEIVES = 5;
/** Receivers per queue. */
export const DEFAULT_RECEIVERS = 3;
const BACKOFF_INITIAL_MS = 1000;
const BACKOFF_MAX_MS = 60_000;

/** Options of {@link QueueConsumer}. */
export interface QueueConsumerOptions {
  readonly address: QueueAddress;
  /** The clients of the account the queue is read with. */
  readonly aws: AwsClientSource;
  /** Handles one message body. Never throws. */
  handle(body: string): Handled;
  /** Called on each change of health, with the reason when unhealthy. */
  onHealth(healthy: boolean, problem: string | undefined): void;
  readonly metrics: ChangeEventMetrics;
  readonly logger: Logger;
  readonly clock: Clock;
  /** @default {@link DEFAULT_RECEIVERS} */
  readonly receivers?: number;
}

/** See the module comment. */
export class QueueConsumer {
  readonly #o: QueueConsumerOptions;
  #healthy: boolean | undefined;
  /**
   * Failed reads so far. A read that began before the latest failure proves nothing about the
   * queue now (a long poll sent before the queue was deleted can still answer empty), so only a
   * read sent after it may make the queue healthy again.
   */
  #failures = 0;

  constructor(opts: QueueConsumerOptions) {
    this.#o = opts;
  }

  /** Whether the last read succeeded (false before the first). */
  get healthy(): boolean {
    return this.#healthy === true;
  }

  /** The queue's label in metrics and messages. */
  get queue(): string {
    return this.#o.address.url;
  }

  /** Reads the queue until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const n = this.#o.receivers ?? DEFAULT_RECEIVERS;
    // One check of the queue before the receivers start: a queue that does not exist or may not
    // be read shows at once, not after a long poll.
    await this.#check(signal);
    await Promise.all(Array.from({ length: n }, () => this.#receive(signal)));
  }

  async #check(signal: AbortSignal): Promise<void> {
    try {
      await (
        await this.#sqs()
      ).send(new GetQueueAttributesCommand({ QueueUrl: this.queue, AttributeNames: ["QueueArn"] }), {
        abortSignal: signal,
      });
      this.#setHealth(true, undefined);
    } catch (err) {
      if (!signal.aborted) this.#failed(err);
    }
  }

  async #receive(signal: AbortSignal): Promise<void> {
    let backoff = BACKOFF_INITIAL_MS;
    while (!signal.aborted) {
      let messages: Message[];
      const failuresBefore = this.#failures;
      try {
        const out = await (
          await this.#sqs()
        ).send(
          new ReceiveMessageCommand({
            QueueUrl: this.queue,
            MaxNumberOfMessages: MAX_MESSAGES,
            WaitTimeSeconds: WAIT_TIME_SECONDS,
            MessageSystemAttributeNames: ["ApproximateReceiveCount"],
          }),
          // The long poll outlasts the usual request timeout.
          { abortSignal: signal, requestTimeout: (WAIT_TIME_SECONDS + 10) * 1000 },
        );
        messages = out.Messages ?? [];
        if (failuresBefore === this.#failures) this.#setHealth(true, undefined);
        backoff = BACKOFF_INITIAL_MS;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof NoPermitYetError) {
          await this.#sleep(Math.max(1, err.retryAfterMs), signal);
          continue;
        }
        this.#failed(err);
        await this.#sleep(backoff, signal);
        backoff = Math.min(BACKOFF_MAX_MS, backoff * 2);
        continue;
      }
      if (messages.length > 0) await this.#handleAll(messages, signal);
    }
  }

  async #handleAll(messages: readonly Message[], signal: AbortSignal): Promise<void> {
    const { metrics } = this.#o;
    const done: Message[] = [];
    for (const m of messages) {
      metrics.received.inc({ queue: this.queue });
      let handled = this.#o.handle(m.Body ?? "");
      if (handled.outcome === "retry") {
        const receives = Number(m.Attributes?.ApproximateReceiveCount ?? "1");
        if (receives < MAX_RECEIVES) continue;
        handled = { outcome: "dropped", reason: "undeliverable" };
      }
      if (handled.outcome === "dropped") {
        metrics.dropped.inc({ queue: this.queue, reason: handled.reason });
        this.#o.logger.debug(
          { queue: this.queue, reason: handled.reason, messageId: m.MessageId },
          "change event dropped",
        );
      }
      done.push(m);
    }
    if (done.length === 0) return;
    try {
      const out = await (
        await this.#sqs()
      ).send(
        new DeleteMessageBatchCommand({
          QueueUrl: this.queue,
          Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? "" })),
        }),
        { abortSignal: signal },
      );
      for (const f of out.Failed ?? [])
        this.#o.logger.warn(
          { queue: this.queue, code: f.Code, message: f.Message },
          "could not delete a handled change event; it comes back",
        );
    } catch (err) {
      // Not deleted: the messages come back after their visibility timeout; their objects are
      // enqueued again then, which costs one observation each.
      if (!signal.aborted)
        this.#o.logger.warn({ err, queue: this.queue }, "could not delete handled change events");
    }
  }

  #failed(err: unknown): void {
    this.#failures += 1;
    const code = err instanceof AwsError ? err.info.code : "Unknown";
    this.#o.metrics.receiveErrors.inc({ queue: this.queue, code });
    const message = err instanceof Error ? err.message : String(err);
    this.#setHealth(false, message);
  }

  #setHealth(healthy: boolean, problem: string | undefined): void {
    if (this.#healthy === healthy) return;
    this.#healthy = healthy;
    this.#o.metrics.healthy.set({ queue: this.queue }, healthy ? 1 : 0);
    if (healthy) this.#o.logger.info({ queue: this.queue }, "reading change events");
    else
      this.#o.logger.warn(
        { queue: this.queue, problem },
        "cannot read change events; polling at the normal interval",
      );
    this.#o.onHealth(healthy, problem);
  }

  async #sqs(): Promise<AwsClientOf<"sqs">> {
    return await this.#o.aws.client("sqs", this.#o.address.region);
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const timer = this.#o.clock.setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        this.#o.clock.clearTimeout(timer);
        resolve();
      };
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}
