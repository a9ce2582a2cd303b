/** What is fixed about the Ec2Instance kind (../common/kind-traits.ts). */
import { TAGS_SETTING } from "../common/driver.ts";
import type { KindTraits } from "../common/kind-traits.ts";
import { ATTRIBUTE_SETTINGS } from "./instance-attributes.ts";
import type { Ec2InstanceObject } from "./model.ts";
import { DESIRED_STATE_SETTING, INSTANCE_TYPE_SETTING, USER_DATA_SETTING } from "./run-state.ts";
import { DELETE_ON_TERMINATION_SETTING, VOLUME_REPORTED_SETTINGS, VOLUME_TAGS_SETTING } from "./volumes.ts";

/** The Ec2Instance kind's static facts. */
export const EC2_INSTANCE_TRAITS: KindTraits<Ec2InstanceObject> = {
  noun: "instance",
  idField: "instanceId",
  /** The settings of an instance that are put back; the rest is immutable. */
  driftSettings: Object.freeze([
    TAGS_SETTING,
    "metadataOptions",
    "iamInstanceProfile",
    ...ATTRIBUTE_SETTINGS,
    DESIRED_STATE_SETTING,
    INSTANCE_TYPE_SETTING,
    USER_DATA_SETTING,
    VOLUME_TAGS_SETTING,
    DELETE_ON_TERMINATION_SETTING,
  ]),
  /** The volume settings whose drift is reported, never repaired: volumes change at launch only. */
  reportedSettings: VOLUME_REPORTED_SETTINGS,
  /** Steady polls of all instances land together, so the batcher can merge their lookups. */
  alignPolls: true,
};
