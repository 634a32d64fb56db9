#!/usr/bin/env bash
# The full form of the fault tests (CI runs a bounded form), each on both topologies: ClusterFaultIT with each fault
# under its own load run (the primary, a secondary, a frontend (split only) and the metadata leader killed with
# SIGKILL and restarted, and the rolling restart of every backend or node) on deploy/local/cluster.sh clusters, the
# kill of a combined node (CombinedClusterIT), ShardedBackendsIT's backend loss, and ClusterEndToEndIT's kill of a
# shard leader (LocalCluster). Prints, per fault, what was acknowledged, lost (must be 0), duplicated, and the longest
# gaps. Takes 20-30 minutes on 2 cores.
# Usage: scripts/fault-suite.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -ntp -q -DskipTests install
mvn -B -ntp verify -pl integration-tests -Dsluice.faults=full -Dsluice.topologies=split,combined -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=ClusterFaultIT,CombinedClusterIT,ShardedBackendsIT,ClusterEndToEndIT -Dfailsafe.failIfNoSpecifiedTests=false
