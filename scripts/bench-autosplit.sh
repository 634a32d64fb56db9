#!/usr/bin/env bash
# A flooded standard queue splits itself, and what its end-to-end rate does (issue 16): a fresh local cluster
# (SLUICE_TOPOLOGY, default combined) with the auto-split thresholds lowered so that this machine's load counts as hot,
# then closed-loop load on one queue ("hot", created with one partition) for SECONDS, the rates of each WINDOW and the
# queue's partition count printed as they go (AutoSplitBench). Stops the cluster.
# Usage: scripts/bench-autosplit.sh [SECONDS (240)] [WINDOW (20)] [PRODUCERS (8)] [CONSUMERS (8)]
# Thresholds: SLUICE_AUTOSPLIT_SENDS_PER_SECOND_PER_PARTITION (default here 100), SLUICE_AUTOSPLIT_SUSTAIN_SECONDS (20),
# SLUICE_AUTOSPLIT_COOLDOWN_SECONDS (60), SLUICE_AUTOSPLIT_MAX_PARTITIONS (8).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/load-common.sh
build_load_classpath
export SLUICE_AUTOSPLIT_SENDS_PER_SECOND_PER_PARTITION=${SLUICE_AUTOSPLIT_SENDS_PER_SECOND_PER_PARTITION:-100}
export SLUICE_AUTOSPLIT_SUSTAIN_SECONDS=${SLUICE_AUTOSPLIT_SUSTAIN_SECONDS:-20}
export SLUICE_AUTOSPLIT_COOLDOWN_SECONDS=${SLUICE_AUTOSPLIT_COOLDOWN_SECONDS:-60}
export SLUICE_AUTOSPLIT_MAX_PARTITIONS=${SLUICE_AUTOSPLIT_MAX_PARTITIONS:-8}
export SLUICE_TOPOLOGY=${SLUICE_TOPOLOGY:-combined}
dir=$(mktemp -d)
trap 'deploy/local/cluster.sh stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
start_local_cluster "$dir"
echo "cluster: $SLUICE_TOPOLOGY; split when sends per second per partition >= $SLUICE_AUTOSPLIT_SENDS_PER_SECOND_PER_PARTITION for $SLUICE_AUTOSPLIT_SUSTAIN_SECONDS s, cool-down $SLUICE_AUTOSPLIT_COOLDOWN_SECONDS s"
java -Xmx1g -cp "integration-tests/target/test-classes:$(cat integration-tests/target/load.classpath)" \
  io.sluice.it.AutoSplitBench "${1:-240}" "${2:-20}" "${3:-8}" "${4:-8}" $(grep '^http' "$dir/endpoints")
grep -h 'split queue' "$dir"/*.log || true
