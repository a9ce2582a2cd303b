/**
 * The kind registry: every managed kind, one line each, in a fixed order. The controllers
 * (src/controllers.ts), the CRDs, the chart's ClusterRole, the IAM table of docs/aws.md and the
 * IAM policies of config/iam (src/gen, `make manifests`) and the e2e RBAC expectations are
 * derived from this list.
 */
import type { KindModule } from "./reconcilers/common/kind.ts";
import { ec2InstanceKind } from "./reconcilers/ec2-instance/index.ts";
import { s3BucketKind } from "./reconcilers/s3-bucket/index.ts";
import { sqsQueueKind } from "./reconcilers/sqs-queue/index.ts";

/** Every managed kind. */
export const KINDS: readonly KindModule[] = Object.freeze([ec2InstanceKind, s3BucketKind, sqsQueueKind]);

/**
 * The kinds of the registry whose controller names are in `names` (`--controllers`), in registry
 * order. Everything the operator builds for a kind (informer, controller, account and change-event
 * routing, owner lookups) is built from this list, so a kind left out costs no API or AWS call.
 */
export function selectKinds(names: readonly string[]): readonly KindModule[] {
  return KINDS.filter((k) => names.includes(k.name));
}
