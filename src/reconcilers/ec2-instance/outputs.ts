/**
 * The values an Ec2Instance writes into the ConfigMap of `spec.writeOutputsTo`.
 */
import type { EC2_INSTANCE_OUTPUT_KEYS, Ec2Instance } from "../../api/v1/index.ts";

/**
 * The output values of an instance, by key; a value EC2 does not report (no public address, an
 * instance not launched yet) is undefined.
 */
export function ec2InstanceOutputs(
  i: Pick<Ec2Instance, "status">,
): Record<(typeof EC2_INSTANCE_OUTPUT_KEYS)[number][0], string | undefined> {
  const s = i.status;
  return {
    INSTANCE_ID: s?.instanceId,
    PRIVATE_IP: s?.privateIP,
    PUBLIC_IP: s?.publicIP,
    PRIVATE_DNS: s?.privateDNS,
    PUBLIC_DNS: s?.publicDNS,
  };
}
