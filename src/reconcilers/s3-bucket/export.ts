/**
 * The S3Bucket kind's export (../common/export.ts): lists the buckets of a region and reads each
 * through the driver's read paths (./bucket-api.ts, every setting of ./settings/, managed by the
 * spec or not), and writes the full spec that asks for the bucket as it is, each setting through
 * its module's inverse (`specOf`). A setting the spec cannot express without a write (website
 * routing rules, notifications to SNS or Lambda) is left unset and named in `omitted`. The
 * statements spec.allowLoggingFrom writes into the policy, for buckets the export holds, are
 * written back as allowLoggingFrom (see {@link policyFields}).
 */
import { isDeepStrictEqual } from "node:util";
import { GetBucketLocationCommand, ListBucketsCommand } from "@aws-sdk/client-s3";
import { s3BucketSpecSchema, type S3BucketSpec } from "../../api/v1/index.ts";
import type { JsonValue } from "../../api/schema/openapi.ts";
import type { AwsClientSource } from "../../aws/clients.ts";
import { AwsError } from "../../aws/errors.ts";
import { sortedTags } from "../../aws/ownership.ts";
import { pages } from "../../aws/pages.ts";
import { s3BucketArn } from "../../aws/partition.ts";
import {
  specTagsOf,
  type ExportContext,
  type ExportedResource,
  type KindExporter,
  type ListedResource,
} from "../common/export.ts";
import { expressiblePolicy } from "../common/export-policy.ts";
import { conflictingSids } from "../common/references.ts";
import { BucketApi } from "./bucket-api.ts";
import { BUCKET_SETTINGS, readSettings, SETTINGS, type BucketSettings } from "./settings/index.ts";
import { objectLock, objectLockSpec, readObjectLock, type ObjectLockState } from "./settings/object-lock.ts";
import { bucketPolicy, loggingSid } from "./settings/policy.ts";
import { normalJson, type BucketSettingDef, type SpecRefs } from "./settings/setting.ts";

/** ListBuckets pages hold at most this many buckets (S3's maximum for MaxBuckets). */
export const LIST_PAGE_SIZE = 10_000;

/**
 * The region of a bucket as GetBucketLocation answers it: no constraint is us-east-1, and `EU`
 * the old name of eu-west-1.
 */
export function locationRegion(constraint: string | undefined): string {
  if (constraint === undefined || constraint === "") return "us-east-1";
  return constraint === "EU" ? "eu-west-1" : constraint;
}

/** The S3Bucket export with the clients of `aws`. */
export function s3BucketExporter(aws: AwsClientSource): KindExporter {
  return {
    list: (region, signal) => listBuckets(aws, region, signal),
    read: (listed, ctx) => readBucket(aws, listed, ctx),
  };
}

/**
 * The buckets of `region`: ListBuckets page by page (asking S3 for that region's only), each
 * bucket's region from the listing where S3 names it, else from GetBucketLocation.
 */
async function* listBuckets(
  aws: AwsClientSource,
  region: string,
  signal: AbortSignal,
): AsyncGenerator<ListedResource, void, undefined> {
  const client = await aws.client("s3", region);
  const call = <O>(operation: string, send: () => Promise<O>): Promise<O> =>
    send().catch((err: unknown) => {
      throw AwsError.from(err, { service: "s3", operation });
    });
  const listing = pages(
    (token) =>
      call("ListBuckets", () =>
        client.send(
          new ListBucketsCommand({
            BucketRegion: region,
            MaxBuckets: LIST_PAGE_SIZE,
            ContinuationToken: token,
          }),
          { abortSignal: signal },
        ),
      ),
    (page) => page.ContinuationToken,
  );
  for await (const page of listing) {
    const named = (page.Buckets ?? [])
      .flatMap((b) => (b.Name !== undefined ? [{ name: b.Name, region: b.BucketRegion }] : []))
      .sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    for (const { name, region: listedRegion } of named) {
      let bucketRegion = listedRegion;
      if (bucketRegion === undefined || bucketRegion === "") {
        try {
          const out = await call("GetBucketLocation", () =>
            client.send(new GetBucketLocationCommand({ Bucket: name }), { abortSignal: signal }),
          );
          bucketRegion = locationRegion(out.LocationConstraint);
        } catch (err) {
          if (err instanceof AwsError && err.kind === "not-found") continue; // deleted meanwhile
          throw err;
        }
      }
      if (bucketRegion !== region) continue;
      yield { id: name, region, arn: s3BucketArn(name, region), awsName: name };
    }
  }
}

/** Reads the bucket `listed` names and writes its spec; undefined when it is gone. */
async function readBucket(
  aws: AwsClientSource,
  listed: ListedResource,
  ctx: ExportContext,
): Promise<ExportedResource | undefined> {
  const { id: name, region } = listed;
  const api = new BucketApi({
    client: await aws.client("s3", region),
    bucket: name,
    region,
    signal: ctx.signal,
  });
  const tags = await api.tags();
  if (tags === undefined) return undefined;
  let versioning: Awaited<ReturnType<BucketApi["versioning"]>>;
  let settings: BucketSettings;
  let lock: ObjectLockState;
  try {
    versioning = await api.versioning();
    // Object Lock through readObjectLock, which also says whether the bucket has it; every other
    // setting through its own read.
    settings = await readSettings(
      api,
      BUCKET_SETTINGS.filter((s) => s !== objectLock.name),
    );
    lock = await objectLockOf(api);
  } catch (err) {
    if (err instanceof AwsError && err.code === "NoSuchBucket") return undefined;
    throw err;
  }
  settings.objectLock = lock.retention;

  const spec: Record<string, JsonValue> = {
    bucketName: name,
    region,
    versioning: versioning === "Enabled",
    forceDelete: false,
    tags: specTagsOf(tags),
  };
  const unresolved: { path: string; arn: string }[] = [];
  const omitted: string[] = [];
  const refs: SpecRefs = { region, refOf: (arn) => ctx.refOf(arn) };
  for (const s of SETTINGS) {
    const def = s as BucketSettingDef<string, unknown>;
    const value = (settings as Record<string, unknown>)[def.name];
    const out = def.specOf(value === undefined ? def.none : value, refs);
    Object.assign(spec, out.fields);
    unresolved.push(...out.unresolved);
    omitted.push(...out.omitted);
  }
  if (
    spec.policy !== undefined &&
    expressiblePolicy(spec.policy, s3BucketSpecSchema.node.properties?.["policy"]) === "inexpressible"
  ) {
    delete spec.policy;
    omitted.push(
      "policy: the bucket policy is not an IAM policy document spec.policy holds unchanged (no " +
        "Version, a single statement not in a list, more statements than it allows, or fields it " +
        "does not define; spec.policy left unset)",
    );
  }
  if (spec.policy !== undefined) {
    const { policy, ...grants } = policyFields(spec.policy, s3BucketArn(name, region), ctx.refOf);
    delete spec.policy;
    Object.assign(spec, policy !== undefined ? { policy } : {}, grants);
  }
  if (spec.objectLock === undefined) {
    const enabled = objectLockSpec(lock.enabled, null);
    if (enabled !== undefined) spec.objectLock = enabled;
  }
  const website = spec.website;
  if (website !== undefined && !websiteExpressible(website, spec.publicAccessBlock)) {
    delete spec.website;
    omitted.push(
      "website: an index document on a bucket whose Block Public Access does not allow a public " +
        "policy (spec.website left unset: the spec asks for publicAccessBlock with " +
        "blockPublicPolicy and restrictPublicBuckets false)",
    );
  }
  return { awsName: name, tags: sortedTags(tags), spec, unresolved, omitted };
}

/** The bucket's Object Lock; a bucket without it has neither Object Lock nor a retention. */
async function objectLockOf(api: BucketApi): Promise<ObjectLockState> {
  try {
    return await readObjectLock(api);
  } catch (err) {
    if (err instanceof AwsError && objectLock.notConfigured.includes(err.code))
      return { enabled: false, retention: null };
    throw err;
  }
}

/**
 * Whether the spec may hold `website` beside `publicAccessBlock`: an index document needs
 * publicAccessBlock set with blockPublicPolicy and restrictPublicBuckets false (the CRD's rule).
 */
function websiteExpressible(website: JsonValue, publicAccessBlock: JsonValue | undefined): boolean {
  const w = website as { indexDocument?: string };
  if (w.indexDocument === undefined) return true;
  const p = publicAccessBlock as { blockPublicPolicy?: boolean; restrictPublicBuckets?: boolean } | undefined;
  return p !== undefined && p.blockPublicPolicy === false && p.restrictPublicBuckets === false;
}

/** How many buckets spec.allowLoggingFrom may name (the CRD's maxItems). */
const MAX_LOGGING_SOURCES = 50;

/** A bucket whose access logs a policy statement lets in, and the exported object it is. */
interface LoggingSource {
  readonly bucketName: string;
  readonly bucketArn: string;
  readonly objectName: string;
}

/**
 * The bucket policy `policy` of the bucket `bucketArn` as spec fields: the statements at its end
 * that are, each exactly, the statement spec.allowLoggingFrom writes for a bucket the export
 * holds, in the order the operator appends them (by bucket name), become `allowLoggingFrom`
 * references to those buckets' objects; the rest stays `policy`, left unset when nothing but an
 * empty 2012-10-17 document remains. The policy the operator computes from the fields is the
 * bucket's: when it would not be (a statement elsewhere already uses one of those Sids, or only
 * the statements would remain of a document with an Id or another Version), the whole policy
 * stays `policy`. A statement for a bucket the export does not hold stays in `policy`, since
 * allowLoggingFrom names S3Bucket objects only.
 */
export function policyFields(
  policy: JsonValue,
  bucketArn: string,
  refOf: SpecRefs["refOf"],
): { readonly policy?: JsonValue; readonly allowLoggingFrom?: JsonValue } {
  const whole = { policy };
  const statements = (policy as { Statement?: unknown } | null)?.Statement;
  if (!Array.isArray(statements)) return whole;
  const sources: LoggingSource[] = [];
  for (let i = statements.length - 1; i >= 0 && sources.length < MAX_LOGGING_SOURCES; i--) {
    const source = loggingSource(statements[i] as JsonValue, bucketArn, refOf);
    const later = sources[0];
    if (source === undefined || (later !== undefined && source.bucketName >= later.bucketName)) break;
    sources.unshift(source);
  }
  if (sources.length === 0) return whole;
  const rest = statements.slice(0, statements.length - sources.length) as JsonValue[];
  const base = (
    rest.length > 0 ? { ...(policy as { [key: string]: JsonValue }), Statement: rest } : undefined
  ) as S3BucketSpec["policy"];
  const sids = sources.map((s) => loggingSid(s.bucketName));
  if (conflictingSids(base, sids).length > 0) return whole;
  const computed = bucketPolicy(base, bucketArn, sources);
  if (!isDeepStrictEqual(computed, normalJson(policy))) return whole;
  return {
    ...(base !== undefined ? { policy: base as JsonValue } : {}),
    allowLoggingFrom: sources.map((s) => ({ bucketRef: { name: s.objectName } })),
  };
}

/**
 * The bucket whose access logs `statement` lets into the bucket `bucketArn`, when the statement
 * is exactly the one spec.allowLoggingFrom writes for it and the export holds that bucket.
 */
function loggingSource(
  statement: JsonValue,
  bucketArn: string,
  refOf: SpecRefs["refOf"],
): LoggingSource | undefined {
  const condition = statement as { Condition?: { ArnLike?: { "aws:SourceArn"?: unknown } } } | null;
  const sourceArn = condition?.Condition?.ArnLike?.["aws:SourceArn"];
  if (typeof sourceArn !== "string") return undefined;
  const ref = refOf(sourceArn);
  if (ref?.kind !== "S3Bucket") return undefined;
  // The export's ARN of a bucket ends with its name (arn:PARTITION:s3:::NAME).
  const source = { bucketName: sourceArn.slice(sourceArn.lastIndexOf(":") + 1), bucketArn: sourceArn };
  const written = (bucketPolicy(undefined, bucketArn, [source]) as { Statement: JsonValue[] }).Statement;
  return isDeepStrictEqual(written, [statement]) ? { ...source, objectName: ref.name } : undefined;
}
