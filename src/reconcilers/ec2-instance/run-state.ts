/**
 * The run state of an instance: what the spec's `desiredState`, `instanceType`, `userData` and
 * `restartForUpdate` ask of the instance EC2 reports, and how ready that makes it. Pure functions
 * over the SDK's `Instance` and what the driver read of its user data; the driver makes the calls.
 *
 * The plan is derived from what EC2 reports alone, never from a record of earlier steps, so a
 * sequence survives a restart of the operator at any point. A type change on a running instance
 * with `restartForUpdate` runs across reconciles: stop (the instance goes `stopping`, polled),
 * then, once it is `stopped`, change the type and start it in one reconcile (`pending`, polled),
 * then `running` with the new type. An operator that stopped between two steps finds a stopped
 * instance whose type differs while the spec wants it running, which is exactly the next step.
 * New user data takes the same path: EC2 changes it only on a stopped instance.
 */
import type { Instance } from "@aws-sdk/client-ec2";
import type { Ec2InstanceSpec } from "../../api/v1/index.ts";
import type { DriftRepair, Readiness } from "../common/driver.ts";
import { stateOf } from "./model.ts";

/** The spec fields the run state depends on. */
export type RunStateSpec = Pick<Ec2InstanceSpec, "instanceType" | "restartForUpdate" | "userData"> & {
  /** Defaulted to `running` by the API server; undefined counts as running. */
  desiredState?: Ec2InstanceSpec["desiredState"] | undefined;
};

/** The settings named in drift repairs of the run state. */
export const DESIRED_STATE_SETTING = "desiredState";
export const INSTANCE_TYPE_SETTING = "instanceType";
export const USER_DATA_SETTING = "userData";

/** What the driver read beside the instance: whether its user data differs from the spec's. */
export interface RunStateFacts {
  /** True only when the spec sets userData and EC2 reports other user data. */
  readonly userDataDiffers: boolean;
}

const NO_FACTS: RunStateFacts = Object.freeze({ userDataDiffers: false });

/** One call of a run-state plan, in the order the plan lists them. */
export type RunStateStep =
  | { readonly call: "ModifyInstanceAttribute"; readonly instanceType: string }
  | { readonly call: "ModifyInstanceAttribute"; readonly instanceType?: undefined; readonly userData: string }
  | { readonly call: "StopInstances" }
  | { readonly call: "StartInstances" };

/** What to do about the run state of an instance now. */
export interface RunStatePlan {
  /** Calls to make in this reconcile, in order (empty: nothing to do, or wait for a transition). */
  readonly steps: readonly RunStateStep[];
  /** The drift repairs the steps amount to, for the Updated Event and the drift metric. */
  readonly repairs: readonly DriftRepair[];
  /**
   * Set when the spec asks for a change that needs the running instance stopped and does not
   * allow a restart: the message for the RestartRequired condition. No step is planned.
   */
  readonly restartRequired?: string;
}

const NOTHING: RunStatePlan = Object.freeze({ steps: [], repairs: [] });

/** The desired run state, `running` when the spec leaves it out. */
export function desiredStateOf(spec: RunStateSpec): "running" | "stopped" {
  return spec.desiredState ?? "running";
}

/** The instance type the spec asks for when EC2 reports another one, else undefined. */
function typeChange(spec: RunStateSpec, instance: Instance): { from: string; to: string } | undefined {
  const have = instance.InstanceType;
  // No instanceType: an observe-only spec, which is never planned for (admission requires it for Full).
  if (have === undefined || spec.instanceType === undefined || have === spec.instanceType) return undefined;
  return { from: have, to: spec.instanceType };
}

/** The changes the spec asks for that need the instance stopped, as `setting: what` phrases. */
function restartChanges(
  spec: RunStateSpec,
  instance: Instance,
  facts: RunStateFacts,
): { setting: string; phrase: string }[] {
  const change = typeChange(spec, instance);
  return [
    ...(change !== undefined
      ? [{ setting: INSTANCE_TYPE_SETTING, phrase: `instanceType ${change.from} -> ${change.to}` }]
      : []),
    ...(facts.userDataDiffers ? [{ setting: USER_DATA_SETTING, phrase: "new userData" }] : []),
  ];
}

/**
 * The run-state calls to make for `instance` now. Only a `running` or `stopped` instance is
 * acted on; in transition (`pending`, `stopping`) nothing is planned and the flow polls. Nothing
 * is planned when the instance already is as the spec asks, so a call is never re-sent.
 */
export function planRunState(
  spec: RunStateSpec,
  instance: Instance,
  facts: RunStateFacts = NO_FACTS,
): RunStatePlan {
  const state = stateOf(instance);
  const want = desiredStateOf(spec);
  const change = typeChange(spec, instance);
  if (state === "running") {
    if (want === "stopped") {
      return {
        steps: [{ call: "StopInstances" }],
        repairs: [
          { setting: DESIRED_STATE_SETTING, description: "desiredState: stopped (stopping the instance)" },
        ],
      };
    }
    const pending = restartChanges(spec, instance, facts);
    if (pending.length === 0) return NOTHING;
    if (spec.restartForUpdate !== true) {
      return {
        steps: [],
        repairs: [],
        restartRequired:
          `${pending.map((p) => p.phrase).join(" and ")} needs the instance stopped: set ` +
          `spec.restartForUpdate: true to let the operator stop and start it, or spec.desiredState: ` +
          `stopped; nothing was changed`,
      };
    }
    return {
      steps: [{ call: "StopInstances" }],
      repairs: [
        ...(change !== undefined
          ? [
              {
                setting: INSTANCE_TYPE_SETTING,
                description: `instanceType: ${change.to} (was ${change.from}; stopping the instance to change it)`,
              },
            ]
          : []),
        ...(facts.userDataDiffers
          ? [{ setting: USER_DATA_SETTING, description: "userData (stopping the instance to change it)" }]
          : []),
      ],
    };
  }
  if (state === "stopped") {
    const steps: RunStateStep[] = [];
    const repairs: DriftRepair[] = [];
    if (change !== undefined) {
      steps.push({ call: "ModifyInstanceAttribute", instanceType: change.to });
      repairs.push({
        setting: INSTANCE_TYPE_SETTING,
        description: `instanceType: ${change.to} (was ${change.from})`,
      });
    }
    if (facts.userDataDiffers && spec.userData !== undefined) {
      steps.push({ call: "ModifyInstanceAttribute", userData: spec.userData });
      repairs.push({ setting: USER_DATA_SETTING, description: "userData" });
    }
    if (want === "running") {
      steps.push({ call: "StartInstances" });
      repairs.push({
        setting: DESIRED_STATE_SETTING,
        description: "desiredState: running (starting the instance)",
      });
    }
    return { steps, repairs };
  }
  return NOTHING;
}

/**
 * Readiness of `instance` for a spec. Ready means the instance exists in the run state the spec
 * asks for: `running` when desiredState is running (and, with restartForUpdate, of the spec's
 * type), `stopped` when desiredState is stopped. An instance the operator is moving towards the
 * desired state (stopping or starting it, or restarting it for a new type) is not ready and
 * polled with the short backoff, like one in a transition of its own. A running instance whose
 * type or user data change waits for RestartRequired stays ready: it runs, only the change is
 * held back.
 */
export function runStateReadiness(
  spec: RunStateSpec,
  instance: Instance,
  facts: RunStateFacts = NO_FACTS,
): Readiness {
  const state = stateOf(instance);
  const want = desiredStateOf(spec);
  switch (state) {
    case "running":
      if (want === "stopped") {
        return {
          ready: false,
          pending: true,
          reason: "Stopping",
          message: "stopping the instance: spec.desiredState is stopped",
        };
      }
      if (spec.restartForUpdate === true && typeChange(spec, instance) !== undefined) {
        return {
          ready: false,
          pending: true,
          reason: "Restarting",
          message: `restarting the instance to change its type to ${spec.instanceType}`,
        };
      }
      if (spec.restartForUpdate === true && facts.userDataDiffers) {
        return {
          ready: false,
          pending: true,
          reason: "Restarting",
          message: "restarting the instance to change its user data",
        };
      }
      return { ready: true, pending: false, reason: "Running", message: "the instance is running" };
    case "pending":
      return { ready: false, pending: true, reason: "Pending", message: "the instance is starting" };
    case "stopping":
      return { ready: false, pending: true, reason: "Stopping", message: "the instance is stopping" };
    case "stopped":
      if (want === "stopped") {
        return {
          ready: true,
          pending: false,
          reason: "Stopped",
          message: "the instance is stopped, as spec.desiredState asks",
        };
      }
      return {
        ready: false,
        pending: true,
        reason: "Starting",
        message: "starting the instance: spec.desiredState is running",
      };
    case "shutting-down":
      return {
        ready: false,
        pending: true,
        reason: "ShuttingDown",
        message: "the instance is shutting down",
      };
    case "terminated":
      return { ready: false, pending: false, reason: "Terminated", message: "the instance is terminated" };
    default:
      return {
        ready: false,
        pending: true,
        reason: "UnknownState",
        message: `EC2 reports the instance in state ${JSON.stringify(state)}`,
      };
  }
}
