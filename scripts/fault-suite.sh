#!/usr/bin/env bash
# The full form of the fault tests (CI runs a bounded form): ClusterFaultIT with each fault under its own load run
# (the primary, a secondary, a frontend and the metadata leader of a 3/3/2 cluster killed with SIGKILL and
# restarted), the rolling restart of every backend, and the kill of a combined node (CombinedClusterIT), on
# deploy/local/cluster.sh clusters of both topologies, ShardedBackendsIT's backend loss, and ClusterEndToEndIT's kill
# of a shard leader on both topologies (LocalCluster). Prints, per fault, what was acknowledged, lost (must be 0),
# duplicated, and the longest gaps. Takes 12-18 minutes on 2 cores.
# Usage: scripts/fault-suite.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -ntp -q -DskipTests install
mvn -B -ntp verify -pl integration-tests -Dsluice.faults=full -Dsluice.topologies=split,combined -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=ClusterFaultIT,CombinedClusterIT,ShardedBackendsIT,ClusterEndToEndIT -Dfailsafe.failIfNoSpecifiedTests=false
