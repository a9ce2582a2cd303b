/**
 * The instance settings the operator keeps in line after launch: the metadata service options
 * and the IAM instance profile. An option or profile the spec leaves unset is not managed. Pure
 * functions over the SDK's `Instance`; the driver makes the calls.
 */
import type { Instance } from "@aws-sdk/client-ec2";
import type { Ec2InstanceSpec } from "../../api/v1/index.ts";
import { metadataOptionsRequest } from "./launch.ts";

/** The metadata options to write (only those the spec sets and the instance differs in), or undefined. */
export function metadataOptionsDrift(
  spec: Pick<Ec2InstanceSpec, "metadataOptions">,
  instance: Instance,
): ReturnType<typeof metadataOptionsRequest> | undefined {
  const want = spec.metadataOptions;
  if (want === undefined) return undefined;
  const have = instance.MetadataOptions;
  const differs =
    (want.httpTokens !== undefined && want.httpTokens !== have?.HttpTokens) ||
    (want.httpPutResponseHopLimit !== undefined &&
      want.httpPutResponseHopLimit !== have?.HttpPutResponseHopLimit) ||
    (want.httpEndpoint !== undefined && want.httpEndpoint !== have?.HttpEndpoint);
  return differs ? metadataOptionsRequest(want) : undefined;
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
