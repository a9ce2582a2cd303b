/** A bucket's calls (../settings/calls.ts) for the unit tests of the settings: each logged, each answered alike. */
import type { BucketCalls } from "../settings/calls.ts";

/** The calls of bucket `b`: each is logged by operation with its input, and answers `answer` (thrown when an Error). */
export function callsAnswering(answer: unknown = {}): {
  s3: BucketCalls;
  calls: { op: string; input: Record<string, unknown> }[];
} {
  const calls: { op: string; input: Record<string, unknown> }[] = [];
  const s3: BucketCalls = {
    bucket: "b",
    call: async (operation, command) => {
      calls.push({ op: operation, input: command.input as Record<string, unknown> });
      if (answer instanceof Error) throw answer;
      return answer as never;
    },
  };
  return { s3, calls };
}
