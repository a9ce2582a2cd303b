/**
 * The check that the cache fits the heap: once the informers have listed every object, the
 * heap they fill is compared with V8's ceiling. Past {@link FIT_SHARE} of it the operator cannot
 * also do its work (reconciles allocate several times the cache while converging), and would
 * only die later of "heap out of memory" in a loop nobody can read. So it exits once, with a
 * message naming the ceiling, the container memory limit it came from, the object count and the
 * limit that would fit; Kubernetes shows the same message as the container's termination
 * message (`/dev/termination-log`).
 */
import { existsSync, writeFileSync } from "node:fs";
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Logger } from "../runtime/logging.ts";
import type { Runnable } from "../runtime/manager/runnable.ts";
import { HEAP_SIZED_ENV, OFF_HEAP_RESERVE_MIB } from "./ceiling.ts";

const MiB = 1024 * 1024;
/** The share of the heap ceiling the cache may fill after the initial list. */
export const FIT_SHARE = 0.6;
/** Where Kubernetes reads a container's termination message by default. */
export const TERMINATION_LOG = "/dev/termination-log";

/** The heap did not fit the cache. */
export class HeapTooSmallError extends Error {
  override readonly name = "HeapTooSmallError";
}

/** Heap figures, in bytes. */
export interface HeapFigures {
  readonly usedBytes: number;
  readonly ceilingBytes: number;
  /** The container memory limit the ceiling was sized from, if it was. */
  readonly memoryLimitBytes: number | undefined;
}

/** The refusal for `objects` cached objects filling `heap`, or undefined when they fit. */
export function fitRefusal(objects: number, heap: HeapFigures): string | undefined {
  if (heap.usedBytes <= FIT_SHARE * heap.ceilingBytes) return undefined;
  const used = Math.ceil(heap.usedBytes / MiB);
  const ceiling = Math.floor(heap.ceilingBytes / MiB);
  const neededHeap = heap.usedBytes / FIT_SHARE / MiB;
  const needed = Math.ceil(Math.max(neededHeap + OFF_HEAP_RESERVE_MIB, (neededHeap * 4) / 3) / 64) * 64;
  // A ceiling set by the flag does not follow the memory limit: raising the limit alone would
  // change nothing, so the flag is what to raise (or drop).
  const [from, raise] =
    heap.memoryLimitBytes !== undefined
      ? [
          `, sized from the container memory limit of ${Math.floor(heap.memoryLimitBytes / MiB)} MiB`,
          `resources.limits.memory to at least ${needed}Mi`,
        ]
      : [
          ", set by --max-old-space-size or V8's default",
          `--max-old-space-size to at least ${Math.ceil(neededHeap / 64) * 64} (or remove it from ` +
            "NODE_OPTIONS, so that the ceiling follows resources.limits.memory)",
        ];
  return (
    `the cache of ${objects} objects fills ${used} MiB of the ${ceiling} MiB JS heap ceiling${from}; ` +
    `more than ${FIT_SHARE * 100} % leaves too little to reconcile them: raise ${raise} ` +
    '(docs/install.md, "Memory")'
  );
}

/** The heap now, after a full collection, and the limit it was sized from. */
export function currentHeap(env: Readonly<Record<string, string | undefined>> = process.env): HeapFigures {
  collectGarbage();
  const stats = getHeapStatistics();
  const sized = env[HEAP_SIZED_ENV];
  return {
    usedBytes: stats.used_heap_size,
    ceilingBytes: stats.heap_size_limit,
    memoryLimitBytes: sized !== undefined && /^[0-9]+$/.test(sized) ? Number(sized) : undefined,
  };
}

/** A full collection, so the heap in use is what the cache holds, not the list's garbage. */
function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as unknown;
  if (typeof gc === "function") (gc as () => void)();
}

/** Options of {@link HeapFitCheck}. */
export interface HeapFitCheckOptions {
  /** Resolves true once every informer has listed its objects. */
  waitForCacheSync(signal: AbortSignal): Promise<boolean>;
  /** The number of objects the cache holds. */
  cachedObjects(): number;
  logger: Logger;
  /** @default {@link currentHeap} */
  heap?: () => HeapFigures;
  /** Writes the termination message. @default {@link TERMINATION_LOG}, when writable */
  terminationMessage?: (message: string) => void;
}

/** Runs {@link fitRefusal} once after the initial list, on every replica. */
export class HeapFitCheck implements Runnable {
  readonly name = "heap-fit-check";
  readonly needLeaderElection = false;
  readonly #o: HeapFitCheckOptions;

  constructor(opts: HeapFitCheckOptions) {
    this.#o = opts;
  }

  async start(signal: AbortSignal): Promise<void> {
    if (!(await this.#o.waitForCacheSync(signal))) return;
    const objects = this.#o.cachedObjects();
    const heap = (this.#o.heap ?? currentHeap)();
    const refusal = fitRefusal(objects, heap);
    this.#o.logger.info(
      {
        objects,
        heapUsedMiB: Math.round(heap.usedBytes / MiB),
        heapCeilingMiB: Math.round(heap.ceilingBytes / MiB),
        ...(heap.memoryLimitBytes !== undefined
          ? { memoryLimitMiB: Math.round(heap.memoryLimitBytes / MiB) }
          : {}),
      },
      "cache listed",
    );
    if (refusal === undefined) {
      if (!signal.aborted)
        await new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => resolve(), { once: true }),
        );
      return;
    }
    (this.#o.terminationMessage ?? writeTerminationLog)(refusal);
    throw new HeapTooSmallError(refusal);
  }
}

function writeTerminationLog(message: string): void {
  // Kubernetes creates the file in every container; elsewhere there is none to write.
  if (!existsSync(TERMINATION_LOG)) return;
  try {
    writeFileSync(TERMINATION_LOG, `${message}\n`);
  } catch {
    // Not writable: the fatal log line carries the message.
  }
}
