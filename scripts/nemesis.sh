#!/usr/bin/env bash
# The long form of the nemesis test (CI runs 45 s of faults): NemesisIT against a real cluster (split: 3 metadata
# members, 3 backends, 2 frontends; combined: 3 nodes), producers and consumers on a standard and a FIFO queue with
# dead-letter queues, while faults go on for SECONDS (default 1800): SIGKILLs and restarts of any process, SIGSTOP
# pauses of shard leaders, backends restarted with a shifted clock and, as root (each process then runs on a host of
# its own: deploy/local/netns.sh), network faults: isolated processes, majority/minority splits, bridges, one-way
# cuts, slow lossy links. Then the history checker's figures (faults by kind, operations, anomalies). SEED replays a
# fault schedule.
# Usage: scripts/nemesis.sh [SECONDS] [SEED] [split|combined]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-1800}
seed=${2:-}
topology=${3:-split}
case "$topology" in
  split|combined) ;;
  *) echo "usage: $0 [SECONDS] [SEED] [split|combined]" >&2; exit 2 ;;
esac
mvn -B -ntp -q -DskipTests install
mvn -B -ntp verify -pl integration-tests -Dsluice.nemesis.seconds="$seconds" -Dsluice.nemesis.seed="$seed" \
  -Dsluice.topologies="$topology" -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=NemesisIT \
  -Dfailsafe.failIfNoSpecifiedTests=false | grep -E "nemesis:|Tests run|FAIL|ERROR|BUILD"
