/**
 * Event notifications (spec.notifications): the queues S3 sends the bucket's events to, and
 * whether it sends them to EventBridge; all in one document, which a write replaces whole.
 */
import {
  GetBucketNotificationConfigurationCommand,
  PutBucketNotificationConfigurationCommand,
  type Event,
} from "@aws-sdk/client-s3";
import { S3_NOTIFICATION_EVENTS, type S3BucketSpec } from "../../../api/v1/index.ts";
import { listItemPath } from "../../common/changes.ts";
import {
  byId,
  count,
  defineSetting,
  settingSpec,
  specJson,
  specRef,
  type ResolvedTargets,
} from "./setting.ts";

/** One queue notification in normal form (events sorted; an absent filter is ""). */
export interface QueueNotification {
  readonly id: string;
  readonly queueArn: string;
  readonly events: readonly string[];
  readonly prefix: string;
  readonly suffix: string;
}

/**
 * The bucket's notification configuration in normal form: its queues sorted by id, how many
 * destinations of other kinds (SNS topics, Lambda functions) it has, which a managed
 * configuration never holds, and whether it sends its events to EventBridge. In a desired
 * configuration `eventBridge` undefined means not managed: the bucket's own value is taken, so a
 * write keeps it.
 */
export interface Notifications {
  readonly queues: readonly QueueNotification[];
  readonly otherDestinations: number;
  readonly eventBridge: boolean | undefined;
}

/** Queues sorted by id, each with its events sorted. */
export function normalNotifications(n: Notifications): Notifications {
  return {
    ...n,
    queues: [...n.queues].map((q) => ({ ...q, events: [...q.events].sort() })).sort(byId),
  };
}

const WHEN = "only for buckets that set notifications";

export const notifications = defineSetting<"notifications", Notifications>({
  name: "notifications",
  path: "spec.notifications",
  iam: {
    read: { action: "s3:GetBucketNotification", calls: ["GetBucketNotificationConfiguration"], when: WHEN },
    write: { action: "s3:PutBucketNotification", calls: ["PutBucketNotificationConfiguration"], when: WHEN },
  },
  desired: (spec, resolved) =>
    spec.notifications !== undefined ? desiredNotifications(spec.notifications, resolved) : undefined,
  completed: (want, have) =>
    want.eventBridge !== undefined ? want : { ...want, eventBridge: have.eventBridge },
  describe(n) {
    const queues = count(n.queues.length, "queue");
    return n.eventBridge === undefined
      ? `notifications: ${queues}`
      : `notifications: ${queues}, EventBridge ${n.eventBridge ? "on" : "off"}`;
  },
  // Destinations the spec cannot name (SNS topics, Lambda functions) are shown by their count.
  toSpec: (n) =>
    specJson({
      queues: n.queues.map((q) =>
        specJson({
          id: q.id,
          queueArn: q.queueArn,
          events: [...q.events],
          filter:
            q.prefix !== "" || q.suffix !== ""
              ? specJson({ prefix: q.prefix || undefined, suffix: q.suffix || undefined })
              : undefined,
        }),
      ),
      eventBridge: n.eventBridge,
      otherDestinations: n.otherDestinations > 0 ? n.otherDestinations : undefined,
    }),
  // A configuration with destinations of other kinds is left unset: a write would remove them.
  specOf(n, refs) {
    if (n.otherDestinations > 0)
      return settingSpec("notifications", undefined, {
        omitted: [
          `notifications: ${count(n.otherDestinations, "SNS topic or Lambda function destination")} ` +
            "(spec.notifications left unset: it names SQS queues only)",
        ],
      });
    const known: readonly string[] = S3_NOTIFICATION_EVENTS;
    const unknown = [...new Set(n.queues.flatMap((q) => q.events.filter((e) => !known.includes(e))))].sort();
    if (unknown.length > 0)
      return settingSpec("notifications", undefined, {
        omitted: [
          `notifications: events the API does not list, ${unknown.join(", ")} (spec.notifications left unset)`,
        ],
      });
    if (n.queues.length === 0 && n.eventBridge !== true) return settingSpec("notifications", undefined);
    const unresolved: { path: string; arn: string }[] = [];
    const queues = n.queues.map((q) =>
      specJson({
        id: q.id,
        ...specRef(
          refs,
          "SqsQueue",
          q.queueArn,
          {
            path: listItemPath("spec.notifications.queues", "id", q.id),
            refField: "queueRef",
            arnField: "queueArn",
          },
          unresolved,
        ),
        events: [...q.events],
        filter:
          q.prefix !== "" || q.suffix !== ""
            ? specJson({ prefix: q.prefix || undefined, suffix: q.suffix || undefined })
            : undefined,
      }),
    );
    return settingSpec(
      "notifications",
      specJson({ queues: queues.length > 0 ? queues : undefined, eventBridge: n.eventBridge }),
      { unresolved },
    );
  },
  // S3 answers a bucket without notifications with an empty configuration, not an error.
  notConfigured: [],
  none: { queues: [], otherDestinations: 0, eventBridge: false },
  async read(s3) {
    const r = await s3.call(
      "GetBucketNotificationConfiguration",
      new GetBucketNotificationConfigurationCommand({ Bucket: s3.bucket }),
    );
    return normalNotifications({
      queues: (r.QueueConfigurations ?? []).map((q) => {
        const rules = q.Filter?.Key?.FilterRules ?? [];
        const rule = (name: string) => rules.find((f) => f.Name?.toLowerCase() === name)?.Value ?? "";
        return {
          id: q.Id ?? "",
          queueArn: q.QueueArn ?? "",
          events: q.Events ?? [],
          prefix: rule("prefix"),
          suffix: rule("suffix"),
        };
      }),
      otherDestinations: (r.TopicConfigurations?.length ?? 0) + (r.LambdaFunctionConfigurations?.length ?? 0),
      // S3 answers an empty <EventBridgeConfiguration/> while the bucket sends to EventBridge.
      eventBridge: r.EventBridgeConfiguration !== undefined,
    });
  },
  async write(s3, n) {
    await s3.call(
      "PutBucketNotificationConfiguration",
      new PutBucketNotificationConfigurationCommand({
        Bucket: s3.bucket,
        NotificationConfiguration: notificationConfiguration(n),
      }),
    );
  },
});

/**
 * spec.notifications in normal form, each queueRef replaced by the ARN `resolved` holds for it.
 * @throws Error when a queueRef was not resolved (the flow resolves every one
 *   first: ../references.ts).
 */
function desiredNotifications(
  n: NonNullable<S3BucketSpec["notifications"]>,
  resolved: ResolvedTargets,
): Notifications {
  return normalNotifications({
    queues: (n.queues ?? []).map((q) => {
      const arn =
        q.queueArn ?? (q.queueRef !== undefined ? resolved.queueArns?.get(q.queueRef.name) : undefined);
      if (arn === undefined) throw new Error(`notification ${q.id}: its queueRef was not resolved to an ARN`);
      return {
        id: q.id,
        queueArn: arn,
        events: q.events,
        prefix: q.filter?.prefix ?? "",
        suffix: q.filter?.suffix ?? "",
      };
    }),
    otherDestinations: 0,
    eventBridge: n.eventBridge,
  });
}

/**
 * The configuration PutBucketNotificationConfiguration takes for `n` (which has no other
 * destinations): one document, so it carries the queues and EventBridge together; an absent
 * EventBridgeConfiguration turns EventBridge off.
 */
function notificationConfiguration(n: Notifications) {
  return {
    ...(n.eventBridge === true ? { EventBridgeConfiguration: {} } : {}),
    QueueConfigurations: n.queues.map((q) => {
      const rules = [
        ...(q.prefix !== "" ? [{ Name: "prefix" as const, Value: q.prefix }] : []),
        ...(q.suffix !== "" ? [{ Name: "suffix" as const, Value: q.suffix }] : []),
      ];
      return {
        Id: q.id,
        QueueArn: q.queueArn,
        Events: q.events as Event[],
        ...(rules.length > 0 ? { Filter: { Key: { FilterRules: rules } } } : {}),
      };
    }),
  };
}
