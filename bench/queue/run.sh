#!/usr/bin/env bash
# Runs the seed-003 work queue benchmark on our TypeScript queue and on client-go's, on this
# machine in one go, and writes bench/results/queue.json plus a markdown table on stdout.
#
# Each side runs REPS times (default 3) as a fresh process, alternating TS and Go so background
# load hits both alike; each process does three untimed warm-up runs, then the measured run. The
# medians are reported. Environment: REPS, ADDS_PER_YIELD (default 32), WORKERS (16), KEYS (64),
# ADDS (320000), YIELD (immediate: one setImmediate per yield, the default; coalesced: one per
# event-loop turn).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export PATH="$root/bin:$PATH"

reps="${REPS:-3}"
args=(--workers "${WORKERS:-16}" --keys "${KEYS:-64}" --adds "${ADDS:-320000}" --adds-per-yield "${ADDS_PER_YIELD:-32}")
gobin="$root/bench/queue/go/bin/clientgo-queue-bench"

echo "building the client-go benchmark ($(go version | cut -d' ' -f3))" >&2
(cd bench/queue/go && go build -trimpath -o "$gobin" .)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for ((i = 1; i <= reps; i++)); do
  node bench/queue/bench.ts "${args[@]}" --yield "${YIELD:-immediate}" | tee -a "$tmp/ts.jsonl" | sed "s/^/ts        #$i /" >&2
  "$gobin" -workers "${WORKERS:-16}" -keys "${KEYS:-64}" -adds "${ADDS:-320000}" -adds-per-yield "${ADDS_PER_YIELD:-32}" \
    | tee -a "$tmp/go.jsonl" | sed "s/^/client-go #$i /" >&2
done

mkdir -p bench/results
node bench/queue/summarize.ts "$tmp/ts.jsonl" "$tmp/go.jsonl" bench/results/queue.json
