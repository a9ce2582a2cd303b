/**
 * One sweep of the Resource Groups Tagging API: every resource of one type in one account and
 * region that carries one tag, with all its tags, read with GetResources at 100 resources a page.
 *
 * AWS answers from an index of its own, which is updated after a resource's tag writes and
 * deletions, asynchronously and with no stated bound: an answer may name deleted resources and
 * show tags as they were some minutes ago (docs/aws.md, "Bulk tag reads"). A sweep says which
 * tags the index holds, never that a resource exists.
 */
import type { AwsClientSource } from "./clients.ts";
import { fromEc2Tags, type TagMap } from "./ownership.ts";
import { pages } from "./pages.ts";

/** GetResources returns at most this many resources a page. */
export const RESOURCES_PER_PAGE = 100;

/** What one sweep reads. */
export interface SweepRequest {
  /** The region the answer covers. */
  readonly region: string;
  /** The resource type filter in GetResources' `service[:type]` form: `s3`, `sqs`. */
  readonly resourceType: string;
  /** Only resources carrying this tag (key and value). */
  readonly tag: { readonly key: string; readonly value: string };
  readonly signal?: AbortSignal;
}

/** The tags of every resource the sweep found, by ARN. */
export type SweptTags = ReadonlyMap<string, Readonly<TagMap>>;

/** Reads every page of GetResources for `req` through `aws`'s `tagging` client. */
export async function sweepTags(aws: AwsClientSource, req: SweepRequest): Promise<SweptTags> {
  const { GetResourcesCommand } = await import("./sdk/tagging.ts");
  const client = await aws.client("tagging", req.region);
  const found = new Map<string, Readonly<TagMap>>();
  const listing = pages(
    (token) =>
      client.send(
        new GetResourcesCommand({
          ResourceTypeFilters: [req.resourceType],
          TagFilters: [{ Key: req.tag.key, Values: [req.tag.value] }],
          ResourcesPerPage: RESOURCES_PER_PAGE,
          ...(token !== undefined ? { PaginationToken: token } : {}),
        }),
        { abortSignal: req.signal },
      ),
    (page) => page.PaginationToken,
  );
  for await (const page of listing) {
    for (const mapping of page.ResourceTagMappingList ?? []) {
      if (mapping.ResourceARN !== undefined) found.set(mapping.ResourceARN, fromEc2Tags(mapping.Tags));
    }
  }
  return found;
}
