/**
 * How a managed kind's resources are named in AWS's change events: each kind declares one
 * {@link ChangeEventNaming} next to its definition (src/reconcilers/<kind>/index.ts), and the
 * consumer (./router.ts) knows no kind. The names an object's resource goes by are kept in the
 * shared cache as the index {@link CHANGE_EVENT_INDEX}, so an event finds its object without a
 * scan.
 */
import type { KubeObject } from "../runtime/kube/object.ts";

/** The cache index of a kind's objects by the names their resources go by in change events. */
export const CHANGE_EVENT_INDEX = "changeEventName";

/** The part of an EventBridge event a kind's table reads. */
export interface EventDetail {
  readonly [key: string]: unknown;
}

/** How the resources of one kind appear in change events. */
export interface ChangeEventNaming<T extends KubeObject = KubeObject> {
  /** The CloudTrail `eventSource` of the kind's service (`s3.amazonaws.com`). */
  readonly eventSource: string;
  /**
   * The resource names a CloudTrail event's `requestParameters` carry (bucket name; queue name
   * from `queueUrl`; instance IDs from `instancesSet`, `resourcesSet` or `instanceId`).
   */
  namesInRequest(requestParameters: EventDetail): string[];
  /** Service events other than CloudTrail's, by `detail-type`: the names their `detail` carries. */
  readonly detailTypes?: Readonly<Record<string, (detail: EventDetail) => string[]>>;
  /** The names `obj`'s resource goes by in events, in the same form: the index values. */
  namesOf(obj: Readonly<T>): string[];
  /** The region `obj`'s resource lives in (events carry theirs). */
  regionOf(obj: Readonly<T>): string | undefined;
}

/** `value` as a record, or undefined. */
export function record(value: unknown): EventDetail | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as EventDetail)
    : undefined;
}

/** The string values of `field` in each element of `list.items` (EC2's `…Set.items[]` shapes). */
export function itemValues(list: unknown, field: string): string[] {
  const items = record(list)?.items;
  if (!Array.isArray(items)) return [];
  return items.map((i) => record(i)?.[field]).filter((v): v is string => typeof v === "string" && v !== "");
}

/** `value` in a list when it is a non-empty string. */
export function stringIn(value: unknown): string[] {
  return typeof value === "string" && value !== "" ? [value] : [];
}
