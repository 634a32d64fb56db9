#!/usr/bin/env bash
# The full form of the scale test (CI runs 300 queues on the split topology): ShardScaleIT with 1,000 queues on a
# 3-backend cluster with 6 shards, then on 3 combined nodes (no Raft group per queue; a backend or node restarted with
# them serves again), printing how long the creates and the restart took. Several minutes on 2 cores.
# Usage: scripts/scale-suite.sh [queues]   (default 1000)
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -ntp -q -DskipTests install
mvn -B -ntp verify -pl integration-tests -Dsluice.scale.queues="${1:-1000}" -Dsluice.topologies=split,combined \
  -Dtest=NoSuchTest \
  -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=ShardScaleIT -Dfailsafe.failIfNoSpecifiedTests=false
