/**
 * Plan fidelity: for each scenario of ./plan-fidelity-scenarios.ts (every kind, each setting
 * family edited, out-of-band changes, creates, adoptions, restarts, a refusal), the mutating AWS
 * calls the operator makes when it applies a change are exactly the ones `kubeprovisioner plan`
 * listed for it, and a plan afterwards says in sync.
 *
 * One operator (all three kinds, `--adoption=enabled`, polls 10 minutes apart) and one test AWS
 * behind the counting proxy, which names the bucket or queue of each call. Every object has
 * `changePolicy: Approve`, so the operator holds every change, a creation included, until its
 * hash is approved; that is what makes the comparison exact and cheap:
 *
 * 1. Set up: the objects are created and every plan approved until all are Ready.
 * 2. Change: every edit at once (spec patches; out-of-band changes at the test AWS followed by a
 *    `compute.cloud.com/reconcile-requested-at` request; the creates and adoptions), then wait
 *    until each object holds its plan (`ChangesPending=True`), or refuses it.
 * 3. Plan: one `plan --live -o json` for the namespace. Each object's plan is what the scenario
 *    says (action, paths), its hash is the operator's `status.pendingChanges.hash` and its changes
 *    the operator's pending ones. Nothing was written to AWS up to here.
 * 4. Apply: approve each plan with its hash. Buckets and queues all at once (the proxy names each
 *    call's resource); instances one at a time, since EC2 calls such as ModifyInstanceAttribute
 *    name no instance the proxy reads: each window, from the approval until the object shows the
 *    plan applied, holds that instance's calls alone (every other instance is held or in sync),
 *    and every EC2 write of the phase must fall in one. A restart takes two approvals: per
 *    docs/plan.md each reconcile's plan lists that reconcile's calls (the stop; then, once the
 *    instance is stopped, the new type or user data and the start), so the second step is
 *    planned again (`plan --live -l`) and approved on its own, and each step is compared.
 * 5. Plan again: in sync, but the refused scenario, which still refuses and never wrote.
 *
 * How calls are compared with a plan: each call is mapped to the IAM actions it needs by the
 * kind's IAM table (`actionOfCall`: a call that needs several actions whatever the spec says,
 * as CreateQueue with tags, needs them all), and each must be among the plan's actions. The
 * plan's actions in order and the calls' actions in order are then the same sequence once runs
 * of one action are taken as one, and no run of calls is longer than the run of changes it
 * applies: changes that AWS takes in one call (the tags, a queue's attributes, a bucket's
 * lifecycle rules) list that call's action each. So the same calls, in the same order, none
 * missing and none added.
 *
 * `PLAN_FIDELITY=full` (`make test-plan-fidelity`) runs every scenario; anything else runs the
 * reduced table `make test` includes.
 */
import assert from "node:assert/strict";
import { before, after, describe, it } from "node:test";
import { APPROVED_CHANGES_ANNOTATION, RECONCILE_REQUESTED_AT_ANNOTATION } from "../../src/api/v1/index.ts";
import type { Plan, PlannedObject } from "../../src/cli/plan-output.ts";
import { KINDS } from "../../src/kinds.ts";
import type { ChangeData } from "../../src/reconcilers/common/changes.ts";
import { shownValue } from "../../src/reconcilers/common/flow/change-policy.ts";
import { actionOfCall, type IamAction } from "../../src/reconcilers/common/iam.ts";
import type { ProxiedCall } from "../support/aws-proxy.ts";
import { operatorProgram } from "../support/operator-program.ts";
import { CommandError, runCommand, waitFor, WAIT_MS } from "../support/process.ts";
import { profileOf } from "../support/profile.ts";
import { cond, ready, type KubeObj } from "../support/reconciler-env.ts";
import {
  awsName,
  baseSpec,
  makeFixtures,
  NS,
  SCENARIOS,
  type Fixtures,
  type Kind,
  type Scenario,
  type World,
} from "./plan-fidelity-scenarios.ts";
import { Ec2Env } from "./reconciler-ec2-fixture.ts";
import { S3Env } from "./reconciler-s3-fixture.ts";
import { SqsEnv } from "./reconciler-sqs-fixture.ts";

const PASS = profileOf("PLAN_FIDELITY");
const TABLE = PASS === "full" ? SCENARIOS : SCENARIOS.filter((s) => s.reduced === true);
/** The label that names each object's scenario, for `plan -l`. */
const LABEL = "plan-fidelity/scenario";
/** The install's flags that plan takes too: adoption granted in every namespace. */
const FLAGS = ["--adoption=enabled"];
/** Operations that change something in AWS. */
const MUTATING =
  /^(Put|Create|Delete|Set|Tag|Untag|Modify|Run|Start|Stop|Terminate|Associate|Disassociate|Replace|Monitor|Unmonitor|Attach|Detach|Enable|Disable)/;

const PLURAL: Record<Kind, string> = {
  S3Bucket: "s3buckets",
  SqsQueue: "sqsqueues",
  Ec2Instance: "ec2instances",
};
const SERVICE: Record<Kind, string> = { S3Bucket: "s3", SqsQueue: "sqs", Ec2Instance: "ec2" };

/** The IAM table of `kind`. */
function iamOf(kind: Kind): readonly IamAction[] {
  const k = KINDS.find((m) => m.resource.kind === kind);
  assert.ok(k !== undefined, kind);
  return k.iam;
}

/** Runs of equal items: `[a, a, b]` is `[[a, 2], [b, 1]]`. */
function runsOf(items: readonly string[]): [string, number][] {
  const runs: [string, number][] = [];
  for (const item of items) {
    const last = runs.at(-1);
    if (last?.[0] === item) last[1] += 1;
    else runs.push([item, 1]);
  }
  return runs;
}

/**
 * Asserts that the mutating calls `operations` (of AWS service `service`, in the order made) are
 * what the plan `changes` lists, by the IAM table `iam`; see the module comment.
 */
function assertCallsArePlanned(
  changes: readonly ChangeData[],
  operations: readonly string[],
  iam: readonly IamAction[],
  service: string,
): void {
  const planned = changes.filter((c) => c.disruption !== "refused").flatMap((c) => [...c.actions]);
  const order = (a: string): number => planned.indexOf(a);
  const called = operations.flatMap((op) => {
    // The one rule of which actions a call needs (the phrase of an AccessDenied): split back.
    const needs = actionOfCall(iam, service, op).split(/, | and /);
    const unplanned = needs.filter((a) => !planned.includes(a));
    assert.deepEqual(unplanned, [], `${op} needs ${needs.join(", ")}, which the plan does not list`);
    return needs.sort((a, b) => order(a) - order(b));
  });
  const want = runsOf(planned);
  const got = runsOf(called);
  const context = `plan ${JSON.stringify(planned)}, calls ${JSON.stringify(operations)}`;
  assert.deepEqual(
    got.map(([a]) => a),
    want.map(([a]) => a),
    `the calls' actions in order are the plan's: ${context}`,
  );
  for (const [i, [action, n]] of got.entries()) {
    const of = want[i]?.[1] ?? 0;
    assert.ok(n <= of, `${n} calls for ${action}, applying ${of} change(s): ${context}`);
  }
}

/** One approved step of a scenario: the plan approved and the mutating calls its apply made. */
interface Step {
  readonly plan: PlannedObject;
  readonly calls: ProxiedCall[];
}

/** What each scenario did, for its own test. */
interface Outcome {
  /** Its plan before anything was applied (phase 3). */
  held?: PlannedObject;
  steps: Step[];
  /** Why its apply went wrong, if it did (its own test reports it). */
  error?: string;
  /** Its plan once applied (phase 5). */
  final?: PlannedObject;
}

describe(`plan fidelity (${PASS} pass: ${TABLE.length} scenarios)`, () => {
  const env = new Ec2Env({
    ns: NS,
    proxy: { resources: true },
    operatorArgs: ["--poll-interval=10m", ...FLAGS],
  });
  const buckets = new S3Env(NS);
  const queues = new SqsEnv(NS);
  let world: World;
  let fixtures: Fixtures;
  const outcomes = new Map<string, Outcome>(TABLE.map((s) => [s.name, { steps: [] }]));
  const outcome = (s: Scenario): Outcome => outcomes.get(s.name) ?? assert.fail(s.name);
  /** Where the proxy's log stood when the edits began. */
  let editsFrom = 0;
  /** The EC2 writes made in the window of a scenario's approval. */
  const attributed = new Set<ProxiedCall>();

  const path = (s: Scenario): string => `/apis/compute.cloud.com/v1/namespaces/${NS}/${PLURAL[s.kind]}`;

  /** Every object of the namespace, by `Kind/name`. */
  const objects = async (): Promise<Map<string, KubeObj>> => {
    const out = new Map<string, KubeObj>();
    for (const kind of Object.keys(PLURAL) as Kind[]) {
      const res = await env.cp.request("GET", `/apis/compute.cloud.com/v1/namespaces/${NS}/${PLURAL[kind]}`);
      assert.equal(res.status, 200, res.text);
      for (const o of (res.body as { items: KubeObj[] }).items) out.set(`${kind}/${o.metadata.name}`, o);
    }
    return out;
  };
  const key = (s: Scenario): string => `${s.kind}/${s.name}`;

  /**
   * Waits until `done` holds of the object of each scenario of `scenarios`; `visit` may act on
   * each one that is not done yet (approve it). Returns the objects as last seen.
   */
  const waitAll = async (
    what: string,
    scenarios: readonly Scenario[],
    done: (o: KubeObj | undefined, s: Scenario) => boolean,
    visit?: (o: KubeObj | undefined, s: Scenario) => Promise<void>,
    timeoutMs = WAIT_MS * 2,
  ): Promise<Map<string, KubeObj>> => {
    let seen = new Map<string, KubeObj>();
    await waitFor(
      what,
      async () => {
        seen = await objects();
        const waiting = scenarios.filter((s) => !done(seen.get(key(s)), s));
        for (const s of waiting) await visit?.(seen.get(key(s)), s);
        if (waiting.length === 0) return true;
        throw new Error(
          `still waiting for ${waiting
            .map((s) => {
              const o = seen.get(key(s));
              const c = (t: string) => `${t}=${cond(o, t)?.status}/${cond(o, t)?.reason}`;
              return `${s.name} (${c("Ready")} ${c("Synced")} ${c("ChangesPending")})`;
            })
            .join(", ")}`,
        );
      },
      timeoutMs,
      250,
    );
    return seen;
  };

  const create = async (s: Scenario, spec: Record<string, unknown>): Promise<void> => {
    const res = await env.cp.request("POST", path(s), {
      apiVersion: "compute.cloud.com/v1",
      kind: s.kind,
      metadata: { name: s.name, labels: { [LABEL]: s.name } },
      spec: { ...baseSpec(s.kind, s.name), changePolicy: "Approve", ...spec },
    });
    assert.equal(res.status, 201, res.text);
  };
  const patch = async (s: Scenario, body: unknown): Promise<KubeObj> => {
    const res = await env.cp.request("PATCH", `${path(s)}/${s.name}`, body, "application/merge-patch+json");
    assert.equal(res.status, 200, res.text);
    return res.body as KubeObj;
  };
  const approve = (s: Scenario, hash: string): Promise<KubeObj> =>
    patch(s, { metadata: { annotations: { [APPROVED_CHANGES_ANNOTATION]: hash } } });
  const pendingHash = (o: KubeObj | undefined): string | undefined => o?.status?.pendingChanges?.hash;
  const held = (o: KubeObj | undefined): boolean =>
    cond(o, "ChangesPending")?.status === "True" && pendingHash(o) !== undefined;

  /** The AWS identity of a scenario's resource: its bucket or queue name, or its instance ID. */
  const resourceOf = (s: Scenario, o: KubeObj | undefined): string => {
    if (s.kind !== "Ec2Instance") return awsName(s.name);
    const id = (o?.status as { instanceId?: string } | undefined)?.instanceId;
    assert.ok(id !== undefined, `${s.name} has an instance`);
    return id;
  };

  /** Runs `plan` with `args`; resolves with its exit status and the plan it printed. */
  const plan = async (args: string[]): Promise<{ code: number; plan: Plan; stderr: string }> => {
    const e = {
      ...process.env,
      ...env.moto.env,
      AWS_ENDPOINT_URL: env.proxy.endpoint,
      AWS_EC2_METADATA_DISABLED: "true",
      KUBECONFIG: env.cp.kubeconfigPath,
    };
    let out: { code: number; stdout: string; stderr: string };
    try {
      const argv = [operatorProgram(), "plan", "--live", "-n", NS, "-o", "json", ...FLAGS, ...args];
      out = { code: 0, ...(await runCommand(process.execPath, argv, { env: e })) };
    } catch (err) {
      if (!(err instanceof CommandError)) throw err;
      out = { code: err.code ?? -1, stdout: err.stdout, stderr: err.stderr };
    }
    assert.notEqual(out.code, 1, out.stderr + out.stdout);
    return { code: out.code, plan: JSON.parse(out.stdout) as Plan, stderr: out.stderr };
  };
  const planOf = (p: Plan, s: Scenario): PlannedObject => {
    const o = p.objects.find((x) => x.kind === s.kind && x.name === s.name);
    assert.ok(o !== undefined, `${s.name} is planned`);
    return o;
  };

  /** Checks that the CLI's plan `p` of `s` is the one `o` holds (hash and changes). */
  const agrees = (p: PlannedObject, o: KubeObj | undefined, s: Scenario): void => {
    const pending = o?.status?.pendingChanges;
    assert.ok(p.approval !== undefined && pending !== undefined, `${s.name}: a plan to approve`);
    assert.equal(p.approval.hash, pending.hash, `${s.name}: the CLI and the operator hash the same changes`);
    assert.equal(p.approval.approved, false);
    assert.deepEqual(
      p.changes.map(({ observed, desired, ...c }) => ({
        ...c,
        ...(observed !== undefined ? { observed: shownValue(observed) } : {}),
        ...(desired !== undefined ? { desired: shownValue(desired) } : {}),
      })),
      pending.changes,
      `${s.name}: the CLI lists the operator's pending changes (values as status bounds them)`,
    );
  };

  before(async () => {
    await env.start();
    buckets.attachTo(env);
    queues.attachTo(env);
    world = { s3: buckets.s3(), sqs: queues.sqs(), ec2: env.ec2(), moto: env.moto };
    fixtures = await makeFixtures(world);
    for (const s of TABLE) await s.prepare?.(world);
  });
  after(() => env.stop());

  it("sets up every object, each creation and plan approved", async () => {
    const existing = TABLE.filter((s) => s.initial !== undefined);
    await Promise.all(existing.map((s) => create(s, s.initial?.(fixtures) ?? {})));
    const approved = new Map<string, string>();
    await waitAll(
      "every object set up",
      existing,
      (o) => ready(o)?.status === "True" && !held(o),
      async (o, s) => {
        const hash = pendingHash(o);
        if (!held(o) || hash === undefined || approved.get(s.name) === hash) return;
        approved.set(s.name, hash);
        await approve(s, hash);
      },
      WAIT_MS * 4,
    );
  });

  it("holds every change until approved, as the CLI plans it: the same hash and changes, no AWS write", async () => {
    editsFrom = env.proxy.calls.length;
    const current = await objects();
    const generations = new Map<string, number | undefined>();
    const requests = new Map<string, string>();
    await Promise.all(
      TABLE.map(async (s) => {
        const edit = s.edit;
        if ("create" in edit) return create(s, edit.create(fixtures));
        if ("spec" in edit) {
          generations.set(s.name, (await patch(s, { spec: edit.spec(fixtures) })).metadata.generation);
          return;
        }
        await edit.outOfBand(world, resourceOf(s, current.get(key(s))));
        const at = `${new Date().toISOString()}#${s.name}`;
        requests.set(s.name, at);
        await patch(s, { metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: at } } });
      }),
    );
    const seen = await waitAll("every change held or refused", TABLE, (o, s) => {
      const gen = generations.get(s.name);
      const at = requests.get(s.name);
      if (gen !== undefined && o?.status?.observedGeneration !== gen) return false;
      if (at !== undefined && o?.status?.lastHandledReconcileAt !== at) return false;
      if (s.plans.action === "refused") {
        const synced = cond(o, "Synced");
        return synced?.reason === "RestartRequired" && synced.observedGeneration === gen;
      }
      return held(o);
    });

    const { code, plan: p } = await plan([]);
    // Every scenario's plan is recorded and checked; the failures are reported together.
    const failures: string[] = [];
    for (const s of TABLE) {
      const o = seen.get(key(s));
      const planned = planOf(p, s);
      outcome(s).held = planned;
      try {
        assert.equal(planned.action, s.plans.action, JSON.stringify(planned));
        assert.deepEqual(planned.changes.map((c) => c.path).sort(), s.plans.paths, "the paths planned");
        if (s.plans.action === "refused") {
          assert.equal(planned.reason, "RestartRequired");
          assert.equal(planned.approval, undefined, "nothing to approve");
          assert.equal(o?.status?.pendingChanges, undefined);
        } else {
          agrees(planned, o, s);
        }
      } catch (err) {
        failures.push(`${s.name}: ${(err as Error).message}`);
      }
    }
    assert.deepEqual(failures, [], "each plan is the scenario's, and the operator's");
    assert.equal(code, 2, "something would change");
    assert.deepEqual(
      env.proxy.calls
        .slice(editsFrom)
        .filter((c) => MUTATING.test(c.operation))
        .map((c) => `${c.operation} ${c.resource ?? ""}`),
      [],
      "nothing is written to AWS before an approval, nor by the plan",
    );
  });

  it("applies each approved plan, then plans in sync", async () => {
    // A plan the checks above refused is not approved: its scenario's test reports it.
    const applying = TABLE.filter(
      (s) => s.plans.action !== "refused" && outcome(s).held?.approval !== undefined,
    );
    /**
     * Whether `o` shows the plan `hash` applied (a creation: once it is Ready, since the create
     * intent is recorded before the calls), or its approval refused as stale.
     */
    const applied = (o: KubeObj | undefined, s: Scenario, hash: string): boolean =>
      cond(o, "ChangesPending")?.reason === "StaleApproval" ||
      (pendingHash(o) !== hash && (s.plans.action !== "create" || ready(o)?.status === "True"));
    const stale = (o: KubeObj | undefined): boolean => cond(o, "ChangesPending")?.reason === "StaleApproval";

    // Buckets and queues, all at once: their calls name their resource.
    const named = async (): Promise<void> => {
      const group = applying.filter((s) => s.kind !== "Ec2Instance");
      const from = env.proxy.calls.length;
      const hashes = new Map(group.map((s) => [s.name, outcome(s).held?.approval?.hash ?? ""]));
      await Promise.all(group.map((s) => approve(s, hashes.get(s.name) ?? "")));
      const seen = await waitAll("the buckets' and queues' plans applied", group, (o, s) =>
        applied(o, s, hashes.get(s.name) ?? ""),
      );
      const calls = env.proxy.calls
        .slice(from)
        .filter((c) => c.service !== "ec2" && MUTATING.test(c.operation));
      const resources = new Set(group.map((s) => awsName(s.name)));
      assert.deepEqual(
        calls
          .filter((c) => !resources.has(c.resource ?? ""))
          .map((c) => `${c.operation} ${c.resource ?? ""}`),
        [],
        "no write to a bucket or queue of no scenario",
      );
      for (const s of group) {
        const planned = outcome(s).held;
        if (stale(seen.get(key(s)))) outcome(s).error = "the approval was refused as stale";
        else if (planned !== undefined)
          outcome(s).steps.push({
            plan: planned,
            calls: calls.filter((c) => c.resource === awsName(s.name)),
          });
      }
    };

    // Instances, one at a time, each step of a restart planned and approved on its own.
    const instances = async (): Promise<void> => {
      for (const s of applying.filter((x) => x.kind === "Ec2Instance")) {
        try {
          await instance(s);
        } catch (err) {
          outcome(s).error = (err as Error).message;
        }
      }
    };
    const instance = async (s: Scenario): Promise<void> => {
      let planned = outcome(s).held;
      for (let step = 1; step <= (s.steps ?? 1); step++) {
        assert.ok(planned?.approval !== undefined, `step ${step} planned`);
        const hash = planned.approval.hash;
        const from = env.proxy.calls.length;
        await approve(s, hash);
        const seen = await waitAll(`${s.name}: step ${step} applied`, [s], (o) => applied(o, s, hash));
        const o = seen.get(key(s));
        assert.ok(!stale(o), `step ${step}: the approval was refused as stale`);
        const calls = env.proxy.calls
          .slice(from)
          .filter((c) => c.service === "ec2" && MUTATING.test(c.operation));
        const id = resourceOf(s, o);
        assert.deepEqual(
          calls.filter((c) => c.resource !== undefined && c.resource !== id).map((c) => c.operation),
          [],
          `${s.name}: no write to another instance in its window`,
        );
        for (const c of calls) attributed.add(c);
        outcome(s).steps.push({ plan: planned, calls });
        if (step === (s.steps ?? 1)) break;
        // The next step, once the instance has moved: planned again, by the CLI for this object.
        const next = await waitAll(
          `${s.name}: step ${step + 1} held`,
          [s],
          (x) => held(x) && pendingHash(x) !== hash,
        );
        const { plan: p } = await plan(["-l", `${LABEL}=${s.name}`]);
        assert.deepEqual(
          p.objects.map((x) => x.name),
          [s.name],
        );
        planned = planOf(p, s);
        agrees(planned, next.get(key(s)), s);
      }
    };
    await Promise.all([named(), instances()]);

    const unattributed = env.proxy.calls
      .slice(editsFrom)
      .filter((c) => c.service === "ec2" && MUTATING.test(c.operation) && !attributed.has(c));
    assert.deepEqual(
      unattributed.map((c) => `${c.operation} ${c.resource ?? ""}`),
      [],
      "every EC2 write was made in the window of the instance whose plan it applies",
    );

    // The final plan, once every object settled: the creates Ready, the restarts running again.
    await waitAll(
      "every object settled",
      applying.filter((s) => outcome(s).error === undefined),
      (o, s) => s.plans.action === "refused" || (ready(o)?.status === "True" && !held(o)),
    );
    const { code, plan: p } = await plan([]);
    for (const s of TABLE) outcome(s).final = planOf(p, s);
    assert.equal(code, 0, "nothing would change");
  });

  describe("each scenario: the calls applied are the plan's, and then it is in sync", () => {
    for (const s of TABLE) {
      it(`${s.kind} ${s.name}`, () => {
        const got = outcome(s);
        assert.equal(got.error, undefined);
        assert.ok(got.held !== undefined && got.final !== undefined, "the phases before ran");
        if (s.plans.action === "refused") {
          assert.deepEqual(got.steps, [], "never approved");
          assert.equal(got.final.reason, "RestartRequired");
        }
        assert.equal(got.steps.length, s.plans.action === "refused" ? 0 : (s.steps ?? 1));
        for (const step of got.steps) {
          const operations = step.calls.map((c) => c.operation);
          assert.ok(operations.length > 0, `${s.name}: the apply wrote something`);
          assertCallsArePlanned(step.plan.changes, operations, iamOf(s.kind), SERVICE[s.kind]);
        }
        assert.equal(got.final.action, s.after ?? "in-sync", JSON.stringify(got.final));
      });
    }
  });
});

describe("the comparison of calls with a plan", () => {
  const iam = iamOf("SqsQueue");
  const change = (path: string, action: string): ChangeData => ({
    path,
    actions: [action],
    disruption: "none",
  });
  const tags = [change("spec.tags.a", "sqs:TagQueue"), change("spec.tags.b", "sqs:TagQueue")];
  const attributes = change("spec.delaySeconds", "sqs:SetQueueAttributes");

  it("accepts the calls a plan lists: one call for the changes of one group, a call that needs two actions", () => {
    assertCallsArePlanned([...tags, attributes], ["TagQueue", "SetQueueAttributes"], iam, "sqs");
    assertCallsArePlanned(
      [{ path: "spec", actions: ["sqs:CreateQueue", "sqs:TagQueue"], disruption: "none" }],
      ["CreateQueue"],
      iam,
      "sqs",
    );
  });

  it("refuses a call not planned, one missing, one too many, and calls out of order", () => {
    assert.throws(() =>
      assertCallsArePlanned([attributes], ["SetQueueAttributes", "UntagQueue"], iam, "sqs"),
    );
    assert.throws(() => assertCallsArePlanned([...tags, attributes], ["SetQueueAttributes"], iam, "sqs"));
    assert.throws(() =>
      assertCallsArePlanned([attributes], ["SetQueueAttributes", "SetQueueAttributes"], iam, "sqs"),
    );
    assert.throws(() =>
      assertCallsArePlanned([...tags, attributes], ["SetQueueAttributes", "TagQueue"], iam, "sqs"),
    );
    assert.throws(() =>
      assertCallsArePlanned(
        [{ path: "spec", actions: ["sqs:CreateQueue"], disruption: "none" }],
        ["CreateQueue"],
        iam,
        "sqs",
      ),
    );
  });
});

/** The reduced pass covers what `make test` must: each kind, a create, an adoption, a restart, a refusal. */
describe("the reduced table", () => {
  it("covers each kind, a create, an adoption, a restart and a refusal; the full table has 30 or more", () => {
    const reduced = SCENARIOS.filter((s) => s.reduced === true);
    assert.deepEqual([...new Set(reduced.map((s) => s.kind))].sort(), [
      "Ec2Instance",
      "S3Bucket",
      "SqsQueue",
    ]);
    for (const action of ["create", "adopt", "refused", "update"] as const) {
      assert.ok(
        reduced.some((s) => s.plans.action === action),
        action,
      );
    }
    assert.ok(
      reduced.some((s) => (s.steps ?? 1) > 1),
      "a restart",
    );
    assert.ok(
      reduced.some((s) => "outOfBand" in s.edit),
      "an out-of-band change",
    );
    assert.ok(SCENARIOS.length >= 30, `${SCENARIOS.length} scenarios`);
    assert.equal(new Set(SCENARIOS.map((s) => s.name)).size, SCENARIOS.length, "names are unique");
  });
});
