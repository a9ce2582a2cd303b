/**
 * The read-budget bound of `kubeprovisioner export` (src/cli/export.ts): the least time the
 * operator's default rate budgets (src/aws/budget-plan.ts) let its AWS calls take.
 *
 * The export lists every kind first, then reads the resources a few at a time in order of kind
 * (Ec2Instance, S3Bucket, SqsQueue), so its calls fall in phases that follow one another: the
 * listing, then each kind's reads, which draw on that kind's service's budgets only. Within a
 * phase its budgets run side by side, and each needs at least (calls − burst) ÷ rate from its
 * first call of the phase to its last (its bucket holds at most a burst when the phase starts):
 * the phase's bound is the largest of these. The export's bound is the sum of its phases' bounds,
 * less the time the phases overlapped (one kind's last reads run beside the next kind's first):
 * the wall time is at least the union of the phases' spans, each span at least its bound. It is
 * never less than the largest phase's bound.
 */
import { DEFAULT_RATE_BUDGETS, type BudgetName, type BudgetSize } from "../../src/aws/budget-plan.ts";
import { budgetUse, type BudgetUse, type SeenCall } from "../plan/budget.ts";

/** The calls that list resources (with the bucket locations a listing may need): the listing phase. */
export const LISTING_OPERATIONS: ReadonlySet<string> = new Set([
  "DescribeInstances",
  "ListBuckets",
  "GetBucketLocation",
  "ListQueues",
]);

/** The export's phase of a call: `list`, or the reads of one service (`read s3`). */
export function exportPhaseOf(c: Pick<SeenCall, "service" | "operation">): string {
  return LISTING_OPERATIONS.has(c.operation) ? "list" : `read ${c.service}`;
}

/** One phase: its calls, their span, and what its budgets allow. */
export interface PhaseBound {
  readonly phase: string;
  readonly calls: number;
  /** From the phase's first call to its last, ms since the epoch. */
  readonly firstAt: number;
  readonly lastAt: number;
  readonly spanSeconds: number;
  /** Calls per second over the span (0 when the span is empty). */
  readonly callsPerSecond: number;
  /** The least span the phase's budgets allow: 0 when every budget's burst covers its calls. */
  readonly boundSeconds: number;
  /** The budget with the largest (calls − burst) ÷ rate: the one that sets the bound. */
  readonly binding: {
    readonly budget: BudgetName;
    readonly key: string;
    readonly calls: number;
    readonly ratePerSecond: number;
    readonly burst: number;
  };
}

/** The bound of phases that follow one another. */
export interface PhasedBound {
  /** Each phase, in the order of its first call. */
  readonly phases: readonly PhaseBound[];
  readonly sumOfPhaseBoundsSeconds: number;
  /** The phases' spans added up, less their union: the time two of them ran side by side. */
  readonly overlapSeconds: number;
  /** The sum less the overlap, at least the largest phase's bound. */
  readonly boundSeconds: number;
}

/** The least time a budget needs for its calls: (calls − burst) ÷ rate, below 0 when its burst covers them. */
const needs = (u: Pick<BudgetUse, "calls" | "burst" | "ratePerSecond">): number =>
  (u.calls - u.burst) / u.ratePerSecond;

/** The bound of `calls`, each in the phase `phaseOf` names, with the budgets' sizes (the defaults unless given). */
export function phasedBound(
  calls: readonly SeenCall[],
  phaseOf: (c: SeenCall) => string,
  sizes: Readonly<Record<BudgetName, Readonly<BudgetSize>>> = DEFAULT_RATE_BUDGETS,
): PhasedBound {
  const byPhase = new Map<string, SeenCall[]>();
  for (const c of calls) {
    const phase = phaseOf(c);
    const list = byPhase.get(phase) ?? [];
    list.push(c);
    byPhase.set(phase, list);
  }
  const phases = [...byPhase].map(([phase, inPhase]): PhaseBound => {
    const firstAt = inPhase.reduce((t, c) => Math.min(t, c.at), Number.POSITIVE_INFINITY);
    const lastAt = inPhase.reduce((t, c) => Math.max(t, c.at), Number.NEGATIVE_INFINITY);
    const spanSeconds = (lastAt - firstAt) / 1000;
    const most = budgetUse(inPhase, Math.max(spanSeconds, Number.MIN_VALUE), sizes).reduce<
      BudgetUse | undefined
    >((m, u) => (m === undefined || needs(u) > needs(m) ? u : m), undefined);
    if (most === undefined) throw new Error(`phase ${phase} draws on no budget`);
    const { budget, key, ratePerSecond, burst } = most;
    const binding = { budget, key, calls: most.calls, ratePerSecond, burst };
    const boundSeconds = Math.max(0, needs(binding));
    return {
      phase,
      calls: inPhase.length,
      firstAt,
      lastAt,
      spanSeconds,
      callsPerSecond: spanSeconds > 0 ? inPhase.length / spanSeconds : 0,
      boundSeconds,
      binding,
    };
  });
  phases.sort((a, b) => a.firstAt - b.firstAt);
  const sum = phases.reduce((s, p) => s + p.boundSeconds, 0);
  const overlapSeconds = phases.reduce((s, p) => s + p.spanSeconds, 0) - unionSeconds(phases);
  return {
    phases,
    sumOfPhaseBoundsSeconds: sum,
    overlapSeconds,
    boundSeconds: Math.max(sum - overlapSeconds, ...phases.map((p) => p.boundSeconds), 0),
  };
}

/** The length of the union of the spans, in seconds; `spans` sorted by start. */
function unionSeconds(spans: readonly Pick<PhaseBound, "firstAt" | "lastAt">[]): number {
  let total = 0;
  let run: { from: number; to: number } | undefined;
  for (const s of spans) {
    if (run !== undefined && s.firstAt <= run.to) run.to = Math.max(run.to, s.lastAt);
    else {
      if (run !== undefined) total += run.to - run.from;
      run = { from: s.firstAt, to: s.lastAt };
    }
  }
  if (run !== undefined) total += run.to - run.from;
  return total / 1000;
}
