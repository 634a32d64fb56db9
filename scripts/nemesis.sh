#!/usr/bin/env bash
# The long form of the nemesis test (CI runs 45 s of faults): NemesisIT against a 3/3/2 cluster of real processes,
# producers and consumers on a standard and a FIFO queue with dead-letter queues, while SIGKILLs and restarts of any
# process, SIGSTOP pauses of shard leaders and backends restarted with a shifted clock go on for SECONDS (default
# 1800); then the history checker's figures (faults injected, operations, anomalies). SEED replays a fault schedule.
# Usage: scripts/nemesis.sh [SECONDS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-1800}
seed=${2:-}
mvn -B -ntp -q -DskipTests install
mvn -B -ntp verify -pl integration-tests -Dsluice.nemesis.seconds="$seconds" -Dsluice.nemesis.seed="$seed" \
  -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=NemesisIT -Dfailsafe.failIfNoSpecifiedTests=false \
  | grep -E "nemesis:|Tests run|FAIL|ERROR|BUILD"
