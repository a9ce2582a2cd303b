/**
 * Finds the objects a change event concerns: each kind's naming table (./naming.ts) says which
 * names the event carries, the cache index {@link CHANGE_EVENT_INDEX} finds the objects going by
 * those names, and only those in the event's region, and in its account where the object
 * recorded one (and the event names one), are concerned.
 */
import type { ManagedObject } from "../reconcilers/common/driver.ts";
import type { Request } from "../runtime/controller/reconciler.ts";
import type { ChangeEvent } from "./event.ts";
import type { ChangeEventNaming } from "./naming.ts";

/** A kind as the router sees it. */
export interface RoutableKind {
  readonly kind: string;
  readonly naming: ChangeEventNaming;
  /** The kind's objects whose resources go by `name` (the cache index). */
  byName(name: string): readonly Readonly<ManagedObject>[];
}

/** The objects of one kind an event concerns. */
export interface Routed {
  readonly kind: RoutableKind;
  readonly requests: Request[];
}

/** The names `event` carries for `naming`'s kind; empty when it is not about that kind. */
export function namesIn(event: ChangeEvent, naming: ChangeEventNaming): string[] {
  if (event.call !== undefined)
    return event.call.eventSource === naming.eventSource
      ? naming.namesInRequest(event.call.requestParameters)
      : [];
  return naming.detailTypes?.[event.detailType]?.(event.detail) ?? [];
}

/** Whether any kind reads `event` at all (else it is unsupported, not merely unowned). */
export function isSupported(event: ChangeEvent, kinds: readonly RoutableKind[]): boolean {
  return kinds.some((k) =>
    event.call !== undefined
      ? event.call.eventSource === k.naming.eventSource
      : k.naming.detailTypes?.[event.detailType] !== undefined,
  );
}

/** The objects `event` concerns, per kind; kinds with none are left out. */
export function route(event: ChangeEvent, kinds: readonly RoutableKind[]): Routed[] {
  const out: Routed[] = [];
  for (const kind of kinds) {
    const seen = new Set<string>();
    const requests: Request[] = [];
    for (const name of namesIn(event, kind.naming)) {
      for (const obj of kind.byName(name)) {
        if (kind.naming.regionOf(obj) !== event.region) continue;
        const recorded = obj.status?.accountId;
        if (recorded !== undefined && event.account !== undefined && recorded !== event.account) continue;
        const namespace = obj.metadata.namespace ?? "";
        const objName = obj.metadata.name ?? "";
        const key = `${namespace}/${objName}`;
        if (seen.has(key)) continue;
        seen.add(key);
        requests.push({ namespace, name: objName });
      }
    }
    if (requests.length > 0) out.push({ kind, requests });
  }
  return out;
}
