/**
 * Exporting a kind's existing resources as manifests (`kubeprovisioner export`): the part each
 * kind supplies. A kind lists the resources of a region and reads one through the same read
 * paths its driver uses, and turns what it read into the full spec of an object that would manage
 * it as it is: applied with `managementPolicy: ObserveOnly` it observes the resource, and switched
 * to `Full` its plan is empty but for the ownership tags. The command (src/cli/export.ts) does the
 * rest: filters, object names, the ownership rules, the output.
 */
import type { JsonValue } from "../../api/schema/openapi.ts";
import { isReservedTagKey, sortedTags, type TagMap } from "../../aws/ownership.ts";
import { AWS_TAG_PREFIX } from "./tags.ts";

/** A resource of another exported object, found by its ARN. */
export interface ExportedRef {
  readonly kind: "S3Bucket" | "SqsQueue";
  /** The exported object's name (metadata.name). */
  readonly name: string;
}

/** What a kind needs from the command while it writes a spec. */
export interface ExportContext {
  readonly signal: AbortSignal;
  /**
   * The exported object whose resource has `arn`, if the export holds one: the kind then writes a
   * reference (`queueRef: {name}`, `bucketRef: {name}`) instead of the ARN.
   */
  refOf(arn: string): ExportedRef | undefined;
}

/** One resource as the export writes it. */
export interface ExportedResource {
  /** The resource's AWS name, which the object's name derives from (bucket name, queue name, instance Name tag or ID). */
  readonly awsName: string;
  /** Every tag it carries: the ownership rules judge them, and `spec.tags` is derived from them. */
  readonly tags: Readonly<TagMap>;
  /** The full spec: every setting the CRD can express, references as references where the export holds the target. */
  readonly spec: Record<string, JsonValue>;
  /** Spec paths that still name a resource by ARN because the export does not hold it: `spec.deadLetterQueue.targetArn`. */
  readonly unresolved: readonly { readonly path: string; readonly arn: string }[];
  /** What the resource has that the CRD cannot express, each a short phrase for a warning. */
  readonly omitted: readonly string[];
}

/** One resource found by a listing: enough to read it, and to resolve references to it before it is read. */
export interface ListedResource {
  /** What {@link KindExporter.read} takes: a bucket name, a queue URL, an instance ID. */
  readonly id: string;
  readonly region: string;
  /** Its ARN, for references from other resources. */
  readonly arn: string;
  /** Its AWS name, for filters by prefix. */
  readonly awsName: string;
}

/** The export of one kind with one account's clients. */
export interface KindExporter {
  /** Every resource of the kind in `region`, page by page (S3: the buckets whose region is `region`). */
  list(region: string, signal: AbortSignal): AsyncIterable<ListedResource>;
  /** Reads `listed` and writes its spec; undefined when it is gone meanwhile. */
  read(listed: ListedResource, ctx: ExportContext): Promise<ExportedResource | undefined>;
}

/** The spec's tags of a resource carrying `tags`: all but the operator's reserved ones and AWS's `aws:` ones. */
export function specTagsOf(tags: Readonly<TagMap>): TagMap {
  return sortedTags(
    Object.fromEntries(
      Object.entries(tags).filter(
        ([k]) => !isReservedTagKey(k) && !k.toLowerCase().startsWith(AWS_TAG_PREFIX),
      ),
    ),
  );
}
