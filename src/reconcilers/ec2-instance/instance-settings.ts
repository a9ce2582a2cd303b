/**
 * The instance settings the operator keeps in line after launch: the metadata service options
 * and the IAM instance profile. An option or profile the spec leaves unset is not managed. Pure
 * functions over the SDK's `Instance`; the driver makes the calls.
 */
import type { Instance } from "@aws-sdk/client-ec2";
import type { JsonValue } from "../../api/schema/openapi.ts";
import type { Ec2InstanceSpec } from "../../api/v1/index.ts";
import type { Change } from "../common/changes.ts";

/**
 * The change of a setting EC2 takes in place with one call (`action`), on its own apply group:
 * `spec.<setting>` (or `path`), from `observed` to `desired`.
 */
export function inPlaceChange(
  setting: string,
  observed: JsonValue | undefined,
  desired: JsonValue | undefined,
  action: string,
  description: string,
  path = `spec.${setting}`,
): Change {
  return {
    path,
    setting,
    observed,
    desired,
    actions: [action],
    disruption: "none",
    description,
    group: setting,
  };
}

/** The setting (and apply group) of the metadata options. */
export const METADATA_OPTIONS_SETTING = "metadataOptions";

/** The metadata options as the spec names them, with how EC2 reports each. */
const METADATA_FIELDS = [
  { field: "httpTokens", have: (m: Instance["MetadataOptions"]) => m?.HttpTokens },
  { field: "httpPutResponseHopLimit", have: (m: Instance["MetadataOptions"]) => m?.HttpPutResponseHopLimit },
  { field: "httpEndpoint", have: (m: Instance["MetadataOptions"]) => m?.HttpEndpoint },
] as const;

/** The metadata options EC2 reports for `instance`, as the spec writes them (every option it reports). */
export function metadataOptionsOf(instance: Instance): NonNullable<Ec2InstanceSpec["metadataOptions"]> {
  const m = instance.MetadataOptions;
  const tokens = METADATA_FIELDS[0].have(m);
  const hops = METADATA_FIELDS[1].have(m);
  const endpoint = METADATA_FIELDS[2].have(m);
  return {
    ...(tokens !== undefined ? { httpTokens: tokens } : {}),
    ...(hops !== undefined ? { httpPutResponseHopLimit: hops } : {}),
    ...(endpoint !== undefined ? { httpEndpoint: endpoint } : {}),
  };
}

/**
 * One change per metadata option the spec sets and the instance differs in
 * (`spec.metadataOptions.httpTokens`), all of one apply group: ModifyInstanceMetadataOptions
 * takes them in one call, which writes every option the spec sets.
 */
export function metadataOptionsChanges(
  spec: Pick<Ec2InstanceSpec, "metadataOptions">,
  instance: Instance,
): Change[] {
  const want = spec.metadataOptions;
  if (want === undefined) return [];
  const out: Change[] = [];
  for (const f of METADATA_FIELDS) {
    const desired = want[f.field];
    const observed = f.have(instance.MetadataOptions);
    if (desired === undefined || desired === observed) continue;
    out.push(
      inPlaceChange(
        METADATA_OPTIONS_SETTING,
        observed,
        desired,
        "ec2:ModifyInstanceMetadataOptions",
        `metadataOptions.${f.field}: ${String(desired)}`,
        `spec.metadataOptions.${f.field}`,
      ),
    );
  }
  return out;
}

/**
 * Whether the instance profile ARN `arn` is the profile `want` names: the same ARN, or, for a
 * name, an ARN whose last path segment is that name (profiles may live under a path).
 */
export function profileMatches(want: string, arn: string | undefined): boolean {
  if (arn === undefined || arn === "") return false;
  if (want.startsWith("arn:")) return want === arn;
  return arn.slice(arn.lastIndexOf("/") + 1) === want;
}

/** What to do about the instance profile: nothing, associate one, or replace the one there. */
export function profileAction(
  spec: Pick<Ec2InstanceSpec, "iamInstanceProfile">,
  instance: Instance,
): "associate" | "replace" | undefined {
  const want = spec.iamInstanceProfile;
  if (want === undefined) return undefined;
  const arn = instance.IamInstanceProfile?.Arn;
  if (profileMatches(want, arn)) return undefined;
  return arn === undefined || arn === "" ? "associate" : "replace";
}
