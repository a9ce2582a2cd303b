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
import { refusedChange, SENSITIVE, type Change } from "../common/changes.ts";
import type { Readiness } from "../common/driver.ts";
import { Reason } from "../common/reasons.ts";
import { stateOf } from "./model.ts";

/** The spec fields the run state depends on. */
export type RunStateSpec = Pick<Ec2InstanceSpec, "instanceType" | "restartForUpdate" | "userData"> & {
  /** Defaulted to `running` by the API server; undefined counts as running. */
  desiredState?: Ec2InstanceSpec["desiredState"] | undefined;
};

/** The settings of the run-state changes. */
export const DESIRED_STATE_SETTING = "desiredState";
export const INSTANCE_TYPE_SETTING = "instanceType";
export const USER_DATA_SETTING = "userData";

/** The apply group of every run-state change: its calls are made in one sequence, last. */
export const RUN_STATE_GROUP = "runState";

/** What the driver read beside the instance: whether its user data differs from the spec's. */
export interface RunStateFacts {
  /** True only when the spec sets userData and EC2 reports other user data. */
  readonly userDataDiffers: boolean;
  /** EC2 reports user data on the instance (its value is never kept). @default false */
  readonly userDataReported?: boolean;
}

const NO_FACTS: RunStateFacts = Object.freeze({ userDataDiffers: false });

/** One call of a run-state plan, in the order the plan lists them. */
export type RunStateStep =
  | { readonly call: "ModifyInstanceAttribute"; readonly instanceType: string }
  | { readonly call: "ModifyInstanceAttribute"; readonly instanceType?: undefined; readonly userData: string }
  | { readonly call: "StopInstances" }
  | { readonly call: "StartInstances" };

/** The IAM action of each run-state call. */
const ACTION: Readonly<Record<RunStateStep["call"], string>> = {
  ModifyInstanceAttribute: "ec2:ModifyInstanceAttribute",
  StopInstances: "ec2:StopInstances",
  StartInstances: "ec2:StartInstances",
};

/** What to do about the run state of an instance now. */
export interface RunStatePlan {
  /**
   * The changes this reconcile makes, in order, each listing the one call it makes now (empty:
   * nothing to do, or wait for a transition); {@link runStateSteps} gives the calls. A change
   * that needs the running instance stopped while the spec allows no restart is refused with
   * reason RestartRequired and holds every other change back.
   */
  readonly changes: readonly Change[];
}

const NOTHING: RunStatePlan = Object.freeze({ changes: Object.freeze([]) as readonly Change[] });

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

/** A change that needs the instance stopped: its setting, values and how Events name it. */
interface StoppedChange {
  readonly setting: string;
  readonly observed: string | undefined;
  readonly desired: string;
  /** `instanceType t3.micro -> t3.large`, `new userData`: for messages. */
  readonly phrase: string;
  /** `instanceType: t3.large`, `userData`: the head of its description. */
  readonly head: string;
  /** `was t3.micro`: what the description adds first in parentheses, if anything. */
  readonly was?: string;
}

/** The changes the spec asks for that need the instance stopped (its type, its user data). */
function stoppedChanges(spec: RunStateSpec, instance: Instance, facts: RunStateFacts): StoppedChange[] {
  const change = typeChange(spec, instance);
  const out: StoppedChange[] = [];
  if (change !== undefined) {
    out.push({
      setting: INSTANCE_TYPE_SETTING,
      observed: change.from,
      desired: change.to,
      phrase: `instanceType ${change.from} -> ${change.to}`,
      head: `instanceType: ${change.to}`,
      was: `was ${change.from}`,
    });
  }
  if (facts.userDataDiffers && spec.userData !== undefined) {
    out.push({
      setting: USER_DATA_SETTING,
      observed: facts.userDataReported === true ? SENSITIVE : undefined,
      desired: SENSITIVE,
      phrase: "new userData",
      head: "userData",
    });
  }
  return out;
}

/** A run-state change of `setting` that calls `call` now. */
function stepChange(
  setting: string,
  observed: string | undefined,
  desired: string,
  call: RunStateStep["call"],
  description: string,
  disruption: "none" | "restart" = "none",
): Change {
  return {
    path: `spec.${setting}`,
    setting,
    observed,
    desired,
    actions: [ACTION[call]],
    disruption,
    description,
    group: RUN_STATE_GROUP,
  };
}

/** The description of `c`, with `detail` in the parentheses: `instanceType: t3.large (was t3.micro; detail)`. */
function described(c: StoppedChange, detail?: string): string {
  const notes = [c.was, detail].filter((n) => n !== undefined);
  return notes.length === 0 ? c.head : `${c.head} (${notes.join("; ")})`;
}

/**
 * The run-state changes to make for `instance` now. Only a `running` or `stopped` instance is
 * acted on; in transition (`pending`, `stopping`) nothing is planned and the flow polls. Nothing
 * is planned when the instance already is as the spec asks, so a call is never re-sent. A change
 * that takes more than one reconcile (a restart: stop now, then change and start once stopped)
 * lists the call of this reconcile and says in its description what follows.
 */
export function planRunState(
  spec: RunStateSpec,
  instance: Instance,
  facts: RunStateFacts = NO_FACTS,
): RunStatePlan {
  const state = stateOf(instance);
  const want = desiredStateOf(spec);
  const stopped = stoppedChanges(spec, instance, facts);
  if (state === "running") {
    if (want === "stopped") {
      const then =
        stopped.length > 0 ? `; then ${stopped.map((c) => c.phrase).join(" and ")} once it is stopped` : "";
      return {
        changes: [
          stepChange(
            DESIRED_STATE_SETTING,
            state,
            want,
            "StopInstances",
            `desiredState: stopped (stopping the instance${then})`,
          ),
        ],
      };
    }
    if (stopped.length === 0) return NOTHING;
    if (spec.restartForUpdate !== true) {
      const message =
        `${stopped.map((c) => c.phrase).join(" and ")} needs the instance stopped: set ` +
        `spec.restartForUpdate: true to let the operator stop and start it, or spec.desiredState: ` +
        `stopped; nothing was changed`;
      return {
        changes: stopped.map((c) =>
          refusedChange({
            path: `spec.${c.setting}`,
            setting: c.setting,
            observed: c.observed,
            desired: c.desired,
            description: described(c, "needs a restart that spec.restartForUpdate does not allow"),
            refusal: { reason: Reason.RestartRequired, message, holdsAll: true },
          }),
        ),
      };
    }
    return {
      changes: stopped.map((c) =>
        stepChange(
          c.setting,
          c.observed,
          c.desired,
          "StopInstances",
          described(c, "stopping the instance to change it, then starting it"),
          "restart",
        ),
      ),
    };
  }
  if (state === "stopped") {
    const changes = stopped.map((c) =>
      stepChange(c.setting, c.observed, c.desired, "ModifyInstanceAttribute", described(c)),
    );
    if (want === "running") {
      changes.push(
        stepChange(
          DESIRED_STATE_SETTING,
          state,
          want,
          "StartInstances",
          "desiredState: running (starting the instance)",
        ),
      );
    }
    return { changes };
  }
  return NOTHING;
}

/**
 * The calls that apply run-state `changes` (of {@link planRunState}, for the same spec), in
 * order, each once: a stop for a restart, the new type or user data on a stopped instance, a
 * start. Decided from each change alone, never by comparing anything again.
 */
export function runStateSteps(spec: RunStateSpec, changes: readonly Change[]): RunStateStep[] {
  const steps: RunStateStep[] = [];
  const add = (step: RunStateStep): void => {
    if (step.call !== "ModifyInstanceAttribute" && steps.some((s) => s.call === step.call)) return;
    steps.push(step);
  };
  for (const c of changes) {
    if (c.disruption === "refused") continue;
    if (c.actions.includes(ACTION.StopInstances)) add({ call: "StopInstances" });
    else if (c.actions.includes(ACTION.StartInstances)) add({ call: "StartInstances" });
    else if (c.setting === INSTANCE_TYPE_SETTING)
      add({ call: "ModifyInstanceAttribute", instanceType: String(c.desired) });
    else if (c.setting === USER_DATA_SETTING && spec.userData !== undefined)
      add({ call: "ModifyInstanceAttribute", userData: spec.userData });
  }
  return steps;
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
