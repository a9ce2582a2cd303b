/**
 * Instance lookups by tag: the filters that find this object's instances (by UID, or by
 * namespace/name/kind for adoption) and a paginated DescribeInstances. Lookups by recorded ID go
 * through the {@link DescribeBatcher} instead.
 */
import { DescribeInstancesCommand, type EC2Client, type Filter, type Instance } from "@aws-sdk/client-ec2";
import {
  ec2OwnershipFilters,
  KIND_TAG,
  MAX_TAG_VALUE_LENGTH,
  NAME_TAG,
  NAMESPACE_TAG,
  type Owner,
} from "../../aws/ownership.ts";
import { LIVE_STATES } from "./instance-view.ts";

/** Filters selecting the live (not terminated) instances carrying the UID tag `uid`. */
export function ownedFilters(uid: string): Filter[] {
  return [...ec2OwnershipFilters(uid), { Name: "instance-state-name", Values: [...LIVE_STATES] }];
}

/**
 * Filters selecting instances tagged with `owner`'s namespace, name and kind, whatever their UID:
 * candidates for adoption. Instances shutting down or terminated are not candidates.
 */
export function namedFilters(owner: Omit<Owner, "uid">): Filter[] {
  return [
    { Name: `tag:${NAMESPACE_TAG}`, Values: [owner.namespace] },
    { Name: `tag:${NAME_TAG}`, Values: [owner.name.slice(0, MAX_TAG_VALUE_LENGTH)] },
    { Name: `tag:${KIND_TAG}`, Values: [owner.kind] },
    { Name: "instance-state-name", Values: LIVE_STATES.filter((s) => s !== "shutting-down") },
  ];
}

/** Every instance matching `filters`, all pages (a repeated page token ends the listing). */
export async function describeInstances(
  ec2: Pick<EC2Client, "send">,
  filters: Filter[],
  signal?: AbortSignal,
): Promise<Instance[]> {
  const out: Instance[] = [];
  const seen = new Set<string>();
  let token: string | undefined;
  do {
    const page = await ec2.send(
      new DescribeInstancesCommand({
        Filters: filters,
        MaxResults: 1000,
        ...(token !== undefined ? { NextToken: token } : {}),
      }),
      signal !== undefined ? { abortSignal: signal } : {},
    );
    for (const r of page.Reservations ?? []) out.push(...(r.Instances ?? []));
    const next = page.NextToken;
    token = next !== undefined && next !== "" && !seen.has(next) ? next : undefined;
    if (token !== undefined) seen.add(token);
  } while (token !== undefined);
  return out;
}
