#!/usr/bin/env bash
# Runs the queue benchmark at several producer pacings (adds per producer yield) and prints a
# markdown table of medians; it does not touch bench/results/queue.json. Environment: REPS
# (default 5), PACINGS (default "1 8 32 128 1024"), YIELD (immediate or coalesced). Builds the Go program like run.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export PATH="$root/bin:$PATH"
reps="${REPS:-5}"
gobin="$root/bench/queue/go/bin/clientgo-queue-bench"
(cd bench/queue/go && go build -trimpath -o "$gobin" .)

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.trim().split("\n"))console.log(JSON.parse(l)[process.argv[1]])})' "$1"; }

echo "| adds per producer yield | TS wall (ms) | TS reconciles | client-go wall (ms) | client-go reconciles | ratio | overlaps (TS / Go, max) |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for pacing in ${PACINGS:-1 8 32 128 1024}; do
  tmp="$(mktemp -d)"
  for ((i = 1; i <= reps; i++)); do
    node bench/queue/bench.ts --adds-per-yield "$pacing" --yield "${YIELD:-immediate}" >>"$tmp/ts"
    "$gobin" -adds-per-yield "$pacing" >>"$tmp/go"
  done
  tw=$(field wall_s <"$tmp/ts" | median)
  gw=$(field wall_s <"$tmp/go" | median)
  tr=$(field reconciles <"$tmp/ts" | median)
  gr=$(field reconciles <"$tmp/go" | median)
  to=$(field overlaps <"$tmp/ts" | sort -n | tail -1)
  go_=$(field overlaps <"$tmp/go" | sort -n | tail -1)
  awk -v p="$pacing" -v tw="$tw" -v gw="$gw" -v tr="$tr" -v gr="$gr" -v to="$to" -v go="$go_" \
    'BEGIN { printf "| %d | %.1f | %d | %.1f | %d | %.2f | %d / %d |\n", p, tw * 1000, tr, gw * 1000, gr, tw / gw, to, go }'
  rm -rf "$tmp"
done
