import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Instance } from "@aws-sdk/client-ec2";
import { SENSITIVE } from "../common/changes.ts";
import { planRunState, runStateReadiness, runStateSteps, type RunStateSpec } from "./run-state.ts";

const inst = (state: string | undefined, type = "t3.micro"): Instance => ({
  InstanceId: "i-0123456789abcdef0",
  InstanceType: type as Instance["InstanceType"],
  ...(state !== undefined ? { State: { Name: state as "running" } } : {}),
});
const spec = (over: Partial<RunStateSpec> = {}): RunStateSpec => ({
  instanceType: "t3.micro",
  desiredState: "running",
  ...over,
});
const steps = (s: RunStateSpec, i: Instance, facts?: { userDataDiffers: boolean }) =>
  runStateSteps(s, planRunState(s, i, facts).changes);
const calls = (s: RunStateSpec, i: Instance): string[] =>
  steps(s, i).map((st) => (st.call === "ModifyInstanceAttribute" ? `Modify:${st.instanceType}` : st.call));
const none = { changes: [] };

describe("planRunState", () => {
  it("plans nothing when the instance is as the spec asks", () => {
    assert.deepEqual(planRunState(spec(), inst("running")), none);
    assert.deepEqual(planRunState(spec({ desiredState: "stopped" }), inst("stopped")), none);
    assert.deepEqual(planRunState({ instanceType: "t3.micro" }, inst("running")), none);
  });

  it("stops a running instance whose spec wants it stopped, and starts a stopped one that should run", () => {
    const stop = planRunState(spec({ desiredState: "stopped" }), inst("running"));
    assert.deepEqual(steps(spec({ desiredState: "stopped" }), inst("running")), [{ call: "StopInstances" }]);
    assert.deepEqual(stop.changes, [
      {
        path: "spec.desiredState",
        setting: "desiredState",
        observed: "running",
        desired: "stopped",
        actions: ["ec2:StopInstances"],
        disruption: "none",
        description: "desiredState: stopped (stopping the instance)",
        group: "runState",
      },
    ]);
    const start = planRunState(spec(), inst("stopped"));
    assert.deepEqual(steps(spec(), inst("stopped")), [{ call: "StartInstances" }]);
    assert.deepEqual(start.changes, [
      {
        path: "spec.desiredState",
        setting: "desiredState",
        observed: "stopped",
        desired: "running",
        actions: ["ec2:StartInstances"],
        disruption: "none",
        description: "desiredState: running (starting the instance)",
        group: "runState",
      },
    ]);
  });

  it("waits for every transition instead of calling", () => {
    for (const state of ["pending", "stopping", "shutting-down", "terminated", undefined]) {
      for (const s of [
        spec(),
        spec({ desiredState: "stopped" }),
        spec({ instanceType: "t3.large", restartForUpdate: true }),
      ]) {
        assert.deepEqual(planRunState(s, inst(state)), none, `${state} ${JSON.stringify(s)}`);
      }
    }
  });

  it("changes the type of a stopped instance, then starts it if it should run", () => {
    const big = spec({ instanceType: "t3.large" });
    assert.deepEqual(calls(big, inst("stopped")), ["Modify:t3.large", "StartInstances"]);
    assert.deepEqual(calls({ ...big, desiredState: "stopped" }, inst("stopped")), ["Modify:t3.large"]);
    const plan = planRunState(big, inst("stopped"));
    assert.deepEqual(
      plan.changes.map((c) => [c.path, c.observed, c.desired, c.actions, c.disruption, c.description]),
      [
        [
          "spec.instanceType",
          "t3.micro",
          "t3.large",
          ["ec2:ModifyInstanceAttribute"],
          "none",
          "instanceType: t3.large (was t3.micro)",
        ],
        [
          "spec.desiredState",
          "stopped",
          "running",
          ["ec2:StartInstances"],
          "none",
          "desiredState: running (starting the instance)",
        ],
      ],
    );
  });

  it("refuses a type change on a running instance without restartForUpdate, holding every change back", () => {
    for (const restartForUpdate of [undefined, false]) {
      const s = spec({ instanceType: "t3.large", restartForUpdate });
      const plan = planRunState(s, inst("running"));
      assert.deepEqual(runStateSteps(s, plan.changes), []);
      assert.equal(plan.changes.length, 1);
      const [refused] = plan.changes;
      assert.deepEqual(
        [refused?.path, refused?.observed, refused?.desired, refused?.actions, refused?.disruption],
        ["spec.instanceType", "t3.micro", "t3.large", [], "refused"],
      );
      assert.equal(refused?.refusal?.reason, "RestartRequired");
      assert.equal(refused?.refusal?.holdsAll, true);
      assert.match(
        refused?.refusal?.message ?? "",
        /^instanceType t3\.micro -> t3\.large needs the instance stopped/,
      );
      assert.match(refused?.refusal?.message ?? "", /spec\.restartForUpdate: true/);
    }
  });

  it("restarts for a type change with restartForUpdate, one step per state, whatever happened in between", () => {
    const s = spec({ instanceType: "t3.large", restartForUpdate: true });
    // running (old type) -> stop; stopping -> wait; stopped (old type) -> modify and start;
    // pending -> wait; running (new type) -> nothing. Each step depends on the instance alone,
    // so an operator restarted at any point continues with the right one.
    assert.deepEqual(calls(s, inst("running")), ["StopInstances"]);
    assert.deepEqual(planRunState(s, inst("running")).changes, [
      {
        path: "spec.instanceType",
        setting: "instanceType",
        observed: "t3.micro",
        desired: "t3.large",
        actions: ["ec2:StopInstances"],
        disruption: "restart",
        description:
          "instanceType: t3.large (was t3.micro; stopping the instance to change it, then starting it)",
        group: "runState",
      },
    ]);
    assert.deepEqual(calls(s, inst("stopping")), []);
    assert.deepEqual(calls(s, inst("stopped")), ["Modify:t3.large", "StartInstances"]);
    assert.deepEqual(calls(s, inst("pending", "t3.large")), []);
    assert.deepEqual(calls(s, inst("running", "t3.large")), []);
  });

  it("stops for desiredState stopped before a type change, and changes the type once stopped", () => {
    const s = spec({ instanceType: "t3.large", desiredState: "stopped" });
    assert.deepEqual(calls(s, inst("running")), ["StopInstances"]);
    assert.deepEqual(
      planRunState(s, inst("running")).changes.map((c) => [c.path, c.disruption, c.description]),
      [
        [
          "spec.desiredState",
          "none",
          "desiredState: stopped (stopping the instance; then instanceType t3.micro -> t3.large once it is stopped)",
        ],
      ],
    );
    assert.deepEqual(calls(s, inst("stopped")), ["Modify:t3.large"]);
  });

  it("plans new user data like a type change: held back, or stop, then modify and start", () => {
    const differs = { userDataDiffers: true };
    const s = spec({ userData: "#!/bin/sh\n" });
    const held = planRunState(s, inst("running"), differs);
    assert.deepEqual(runStateSteps(s, held.changes), []);
    assert.deepEqual(
      held.changes.map((c) => [
        c.path,
        c.observed,
        c.desired,
        c.disruption,
        c.refusal?.reason,
        c.refusal?.holdsAll,
      ]),
      [["spec.userData", undefined, SENSITIVE, "refused", "RestartRequired", true]],
    );
    assert.match(
      held.changes[0]?.refusal?.message ?? "",
      /^new userData needs the instance stopped: set spec\.restartForUpdate/,
    );
    const both = planRunState({ ...s, instanceType: "t3.large" }, inst("running"), differs);
    assert.deepEqual(
      both.changes.map((c) => c.path),
      ["spec.instanceType", "spec.userData"],
    );
    for (const c of both.changes)
      assert.match(c.refusal?.message ?? "", /^instanceType t3\.micro -> t3\.large and new userData needs/);
    const restart = { ...s, restartForUpdate: true };
    const reported = { userDataDiffers: true, userDataReported: true };
    const stop = planRunState(restart, inst("running"), reported);
    assert.deepEqual(runStateSteps(restart, stop.changes), [{ call: "StopInstances" }]);
    assert.deepEqual(stop.changes, [
      {
        path: "spec.userData",
        setting: "userData",
        observed: SENSITIVE,
        desired: SENSITIVE,
        actions: ["ec2:StopInstances"],
        disruption: "restart",
        description: "userData (stopping the instance to change it, then starting it)",
        group: "runState",
      },
    ]);
    assert.ok(!JSON.stringify(stop.changes).includes("#!/bin/sh"), "the value is never carried");
    assert.deepEqual(
      runStateSteps(
        restart,
        planRunState({ ...restart, instanceType: "t3.large" }, inst("running"), differs).changes,
      ),
      [{ call: "StopInstances" }],
      "one stop for both changes",
    );
    assert.deepEqual(steps(restart, inst("stopped"), differs), [
      { call: "ModifyInstanceAttribute", userData: "#!/bin/sh\n" },
      { call: "StartInstances" },
    ]);
    assert.deepEqual(
      planRunState(restart, inst("stopped"), differs).changes.map((c) => [c.path, c.actions, c.description]),
      [
        ["spec.userData", ["ec2:ModifyInstanceAttribute"], "userData"],
        ["spec.desiredState", ["ec2:StartInstances"], "desiredState: running (starting the instance)"],
      ],
    );
    assert.deepEqual(steps(restart, inst("stopping"), differs), []);
    assert.deepEqual(planRunState(restart, inst("running")), none, "matching user data");
    const r = runStateReadiness(restart, inst("running"), differs);
    assert.deepEqual([r.ready, r.reason], [false, "Restarting"]);
    assert.equal(runStateReadiness(s, inst("running"), differs).reason, "Running", "held back: still Ready");
  });

  it("leaves the type alone when EC2 does not report one", () => {
    const i: Instance = { InstanceId: "i-1", State: { Name: "stopped" } };
    assert.deepEqual(calls(spec({ desiredState: "stopped" }), i), []);
  });
});

describe("runStateReadiness", () => {
  const cases: Array<[string, RunStateSpec, Instance, boolean, boolean, string]> = [
    ["running, wanted running", spec(), inst("running"), true, false, "Running"],
    ["stopped, wanted stopped", spec({ desiredState: "stopped" }), inst("stopped"), true, false, "Stopped"],
    ["running, wanted stopped", spec({ desiredState: "stopped" }), inst("running"), false, true, "Stopping"],
    ["stopped, wanted running", spec(), inst("stopped"), false, true, "Starting"],
    ["pending", spec(), inst("pending"), false, true, "Pending"],
    ["pending, wanted stopped", spec({ desiredState: "stopped" }), inst("pending"), false, true, "Pending"],
    ["stopping", spec(), inst("stopping"), false, true, "Stopping"],
    ["shutting-down", spec(), inst("shutting-down"), false, true, "ShuttingDown"],
    ["terminated", spec(), inst("terminated"), false, false, "Terminated"],
    ["no state reported", spec(), inst(undefined), false, true, "UnknownState"],
    [
      "running, restarting for a new type",
      spec({ instanceType: "t3.large", restartForUpdate: true }),
      inst("running"),
      false,
      true,
      "Restarting",
    ],
    [
      "running, a type change held back (RestartRequired)",
      spec({ instanceType: "t3.large" }),
      inst("running"),
      true,
      false,
      "Running",
    ],
    [
      "stopped with another type, wanted stopped",
      spec({ instanceType: "t3.large", desiredState: "stopped" }),
      inst("stopped"),
      true,
      false,
      "Stopped",
    ],
  ];
  for (const [what, s, i, ready, pending, reason] of cases) {
    it(`${what}: ready=${ready}, pending=${pending}, reason ${reason}`, () => {
      const r = runStateReadiness(s, i);
      assert.deepEqual([r.ready, r.pending, r.reason], [ready, pending, reason]);
      assert.ok(r.message.length > 0);
    });
  }
});
