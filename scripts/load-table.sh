#!/usr/bin/env bash
# One session, every row of docs/performance.md's end-to-end table: ElasticMQ, `sluice dev`, one node on the shard
# path with a one-replica Raft log (`sluice dev` runs a local log under the same path), the split 3/3/2 cluster and the combined 3-node cluster, back
# to back with the same load (only ratios from one session count: this machine's speed varies 2-3x from day to day).
# Each row is one of the load scripts; this only runs them in turn.
# Usage: scripts/load-table.sh [LoadGenerator flags], e.g.
#   --warmup 300 --seconds 30 --producers 8 --consumers 8 --max-backlog 2000 --drain 90
# (docs/performance.md: a closed loop, sent = received, and a warm-up long enough for the clusters' JIT to settle).
# Output: each run's figures, then one line per row. Takes ~6 minutes per row with a 90 s warm-up, ~8 with 300 s.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/load-common.sh
build_load_classpath
export SLUICE_LOAD_NO_BUILD=1
out=$(mktemp -d)
run_row() {
  local name=$1; shift
  echo "=== $name"
  "$@" | tee "$out/$name.txt" || true # a script's trap may end it non-zero after its figures
}
run_row elasticmq scripts/load-elasticmq.sh "$@"
run_row dev scripts/load-e2e.sh --idle 20 "$@"
run_row one-node scripts/load-one-node.sh --idle 20 "$@"
run_row split env SLUICE_TOPOLOGY=split scripts/load-cluster.sh --idle 20 "$@"
run_row combined env SLUICE_TOPOLOGY=combined scripts/load-cluster.sh --idle 20 "$@"
echo "=== summary (end to end msg/s | send p50/p99 | server CPU s per 1,000 messages | idle CPU)"
for name in elasticmq dev one-node split combined; do
  f="$out/$name.txt"
  printf '%-10s | %s | %s | %s | %s\n' "$name" \
    "$(grep -m1 'end to end  ' "$f" | awk '{print $4}')" \
    "$(grep -m1 'send (batch)' "$f" | awk '{print $4" / "$7" ms"}')" \
    "$(grep -m1 'CPU s per 1,000' "$f" | sed -E 's/.*server ([0-9.]+).*/\1/')" \
    "$(grep -m1 'idle server CPU' "$f" | sed -E 's/.*load: ([0-9.]+%).*/\1/' || true)"
done
rm -rf "$out"
