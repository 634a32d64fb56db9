#!/usr/bin/env bash
# What a FIFO queue's reorder window (SluiceReorderWindowMillis, issue 18) costs: end-to-end load against a fresh
# `sluice dev` per run (scripts/load-e2e.sh) on a FIFO queue of GROUPS message groups whose messages carry
# Sluice.ProducerTime, with windows of 0, 100 and 1,000 ms: once unpaced (throughput), once paced at RATE msg/s
# (end-to-end latency without a growing backlog). Prints each run's figures and a summary table.
# Usage: scripts/bench-reorder.sh [SECONDS (30)] [RATE (400)] [GROUPS (64)] [WARMUP (20)]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/load-common.sh
build_load_classpath
export SLUICE_LOAD_NO_BUILD=1
seconds=${1:-30}
rate=${2:-400}
groups=${3:-64}
warmup=${4:-20}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for window in 0 100 1000; do
  for pace in unpaced "$rate"; do
    flags=(--warmup "$warmup" --seconds "$seconds" --producers 8 --consumers 8 --drain 60 --fifo-groups "$groups"
      --reorder-window "$window")
    [ "$pace" != unpaced ] && flags+=(--rate "$pace")
    echo "=== window $window ms, $pace"
    scripts/load-e2e.sh "${flags[@]}" | tee -a "$out" | sed 's/^/  /' || true # its trap may end it non-zero
  done
done
echo
echo "| window | rate | end to end msg/s | e2e p50 | e2e p99 | server CPU s / 1,000 |"
echo "|---|---|---|---|---|---|"
awk '/^load:/ { w = $0; sub(/.*reorder window /, "", w); sub(/ ms.*/, "", w); r = $0; sub(/.*rate /, "", r); sub(/,.*/, "", r) }
     /end to end .*msg\/s/ { rate = $4 }
     /end to end +p50/ { p50 = $5; p99 = $8 }
     /CPU s per 1,000 messages end to end/ { cpu = $10; sub(/,/, "", cpu); printf "| %s ms | %s | %s | %s ms | %s ms | %s |\n", w, r, rate, p50, p99, cpu }' "$out"
