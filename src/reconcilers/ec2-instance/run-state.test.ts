import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Instance } from "@aws-sdk/client-ec2";
import { planRunState, runStateReadiness, type RunStateSpec } from "./run-state.ts";

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
const calls = (s: RunStateSpec, i: Instance): string[] =>
  planRunState(s, i).steps.map((st) =>
    st.call === "ModifyInstanceAttribute" ? `Modify:${st.instanceType}` : st.call,
  );

describe("planRunState", () => {
  it("plans nothing when the instance is as the spec asks", () => {
    assert.deepEqual(planRunState(spec(), inst("running")), { steps: [], repairs: [] });
    assert.deepEqual(planRunState(spec({ desiredState: "stopped" }), inst("stopped")), {
      steps: [],
      repairs: [],
    });
    assert.deepEqual(planRunState({ instanceType: "t3.micro" }, inst("running")), { steps: [], repairs: [] });
  });

  it("stops a running instance whose spec wants it stopped, and starts a stopped one that should run", () => {
    const stop = planRunState(spec({ desiredState: "stopped" }), inst("running"));
    assert.deepEqual(stop.steps, [{ call: "StopInstances" }]);
    assert.deepEqual(
      stop.repairs.map((r) => r.setting),
      ["desiredState"],
    );
    const start = planRunState(spec(), inst("stopped"));
    assert.deepEqual(start.steps, [{ call: "StartInstances" }]);
    assert.deepEqual(start.repairs, [
      { setting: "desiredState", description: "desiredState: running (starting the instance)" },
    ]);
  });

  it("waits for every transition instead of calling", () => {
    for (const state of ["pending", "stopping", "shutting-down", "terminated", undefined]) {
      for (const s of [
        spec(),
        spec({ desiredState: "stopped" }),
        spec({ instanceType: "t3.large", restartForUpdate: true }),
      ]) {
        assert.deepEqual(
          planRunState(s, inst(state)),
          { steps: [], repairs: [] },
          `${state} ${JSON.stringify(s)}`,
        );
      }
    }
  });

  it("changes the type of a stopped instance, then starts it if it should run", () => {
    const big = spec({ instanceType: "t3.large" });
    assert.deepEqual(calls(big, inst("stopped")), ["Modify:t3.large", "StartInstances"]);
    assert.deepEqual(calls({ ...big, desiredState: "stopped" }, inst("stopped")), ["Modify:t3.large"]);
    assert.deepEqual(
      planRunState(big, inst("stopped")).repairs.map((r) => r.description),
      ["instanceType: t3.large (was t3.micro)", "desiredState: running (starting the instance)"],
    );
  });

  it("refuses a type change on a running instance without restartForUpdate, planning no call", () => {
    for (const restartForUpdate of [undefined, false]) {
      const plan = planRunState(spec({ instanceType: "t3.large", restartForUpdate }), inst("running"));
      assert.deepEqual(plan.steps, []);
      assert.deepEqual(plan.repairs, []);
      assert.match(
        plan.restartRequired ?? "",
        /^instanceType t3\.micro -> t3\.large needs the instance stopped/,
      );
      assert.match(plan.restartRequired ?? "", /spec\.restartForUpdate: true/);
    }
  });

  it("restarts for a type change with restartForUpdate, one step per state, whatever happened in between", () => {
    const s = spec({ instanceType: "t3.large", restartForUpdate: true });
    // running (old type) -> stop; stopping -> wait; stopped (old type) -> modify and start;
    // pending -> wait; running (new type) -> nothing. Each step depends on the instance alone,
    // so an operator restarted at any point continues with the right one.
    assert.deepEqual(calls(s, inst("running")), ["StopInstances"]);
    assert.equal(planRunState(s, inst("running")).repairs[0]?.setting, "instanceType");
    assert.deepEqual(calls(s, inst("stopping")), []);
    assert.deepEqual(calls(s, inst("stopped")), ["Modify:t3.large", "StartInstances"]);
    assert.deepEqual(calls(s, inst("pending", "t3.large")), []);
    assert.deepEqual(calls(s, inst("running", "t3.large")), []);
  });

  it("stops for desiredState stopped before a type change, and changes the type once stopped", () => {
    const s = spec({ instanceType: "t3.large", desiredState: "stopped" });
    assert.deepEqual(calls(s, inst("running")), ["StopInstances"]);
    assert.equal(planRunState(s, inst("running")).restartRequired, undefined);
    assert.deepEqual(calls(s, inst("stopped")), ["Modify:t3.large"]);
  });

  it("plans new user data like a type change: held back, or stop, then modify and start", () => {
    const differs = { userDataDiffers: true };
    const s = spec({ userData: "#!/bin/sh\n" });
    const held = planRunState(s, inst("running"), differs);
    assert.deepEqual([held.steps, held.repairs], [[], []]);
    assert.match(
      held.restartRequired ?? "",
      /^new userData needs the instance stopped: set spec\.restartForUpdate/,
    );
    const both = planRunState({ ...s, instanceType: "t3.large" }, inst("running"), differs);
    assert.match(both.restartRequired ?? "", /^instanceType t3\.micro -> t3\.large and new userData needs/);
    const restart = { ...s, restartForUpdate: true };
    const stop = planRunState(restart, inst("running"), differs);
    assert.deepEqual(stop.steps, [{ call: "StopInstances" }]);
    assert.deepEqual(
      stop.repairs.map((r) => r.setting),
      ["userData"],
    );
    assert.deepEqual(planRunState(restart, inst("stopped"), differs).steps, [
      { call: "ModifyInstanceAttribute", userData: "#!/bin/sh\n" },
      { call: "StartInstances" },
    ]);
    assert.deepEqual(planRunState(restart, inst("stopping"), differs).steps, []);
    assert.deepEqual(
      planRunState(restart, inst("running")),
      { steps: [], repairs: [] },
      "matching user data",
    );
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
