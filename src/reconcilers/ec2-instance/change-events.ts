/**
 * How instances are named in AWS change events: EC2's own "EC2 Instance State-change
 * Notification" carries `detail["instance-id"]`; CloudTrail's EC2 management events carry the
 * IDs in `requestParameters`: `instancesSet.items[].instanceId` (StopInstances, StartInstances,
 * TerminateInstances, RebootInstances), `resourcesSet.items[].resourceId` (CreateTags, DeleteTags;
 * only the `i-` IDs are instances) or `instanceId` (ModifyInstanceAttribute).
 */
import type { ChangeEventNaming } from "../../change-events/naming.ts";
import { itemValues, stringIn } from "../../change-events/naming.ts";
import type { Ec2InstanceObject } from "./model.ts";

/** The detail-type of EC2's instance state events. */
export const EC2_STATE_CHANGE = "EC2 Instance State-change Notification";

/** The Ec2Instance kind's naming table. */
export const ec2InstanceChangeEvents: ChangeEventNaming<Ec2InstanceObject> = {
  eventSource: "ec2.amazonaws.com",
  namesInRequest: (p) => [
    ...itemValues(p.instancesSet, "instanceId"),
    ...itemValues(p.resourcesSet, "resourceId").filter((id) => id.startsWith("i-")),
    ...stringIn(p.instanceId),
  ],
  detailTypes: { [EC2_STATE_CHANGE]: (d) => stringIn(d["instance-id"]) },
  // The instance it created (status), or the one an observe-only object names (spec).
  namesOf: (i) => [...new Set([...stringIn(i.status?.instanceId), ...stringIn(i.spec.instanceId)])],
  regionOf: (i) => i.spec.region,
};
