/**
 * The Ec2Instance controller: the shared reconcile flow with the EC2 driver, named
 * `ec2instance` (the `controller` label of its metrics and the Event source
 * `ec2instance-controller`).
 */
import type { Instance } from "@aws-sdk/client-ec2";
import { Ec2InstanceResource } from "../../api/v1/index.ts";
import type { Controller } from "../../runtime/controller/index.ts";
import { setupManagedController, type ReconcilerDeps } from "../common/setup.ts";
import { Ec2InstanceDriver, type Ec2InstanceObject } from "./driver.ts";

export { DescribeBatcher } from "./describe-batcher.ts";
export { Ec2InstanceDriver, InstanceNotVisibleError, type Ec2InstanceObject } from "./driver.ts";

/**
 * Adds the Ec2Instance controller to `deps.manager`. Instance lookups of concurrent reconciles
 * share DescribeInstances calls; the steady polls of settled instances are answered from the
 * snapshot those calls leave (prefetched for every instance polled recently), so one call per
 * poll round serves up to 1000 instances even with a single worker.
 */
export function setupEc2InstanceController(deps: ReconcilerDeps): Controller {
  return setupManagedController<Ec2InstanceObject, Instance>(
    "ec2instance",
    Ec2InstanceResource,
    new Ec2InstanceDriver({
      aws: deps.aws,
      clock: deps.clock,
      ...(deps.pollIntervalMs !== undefined ? { pollIntervalMs: deps.pollIntervalMs } : {}),
    }),
    deps,
  );
}
