#!/usr/bin/env bash
# The client suites on the clusters (CI runs them against `sluice dev`): every test class built on SharedServer (the
# AWS SDK's scenarios, boto3's and the aws CLI's over the Query protocol, malformed input, auth, FIFO and dead letters,
# partitioned queues, producer order, redelivery backoff, the worker library) against a split cluster (3 metadata
# members, 3 backends, R = 3, one frontend), then against three combined nodes; one cluster per test class, its
# clients at one frontend or node. boto3 and the aws CLI must be installed (.ci/run installs them): missing, they fail.
# Each topology runs even if the one before failed; the exit status is non-zero if any did. ~9 minutes per topology.
# SLUICE_NETNS=1 (root): every process of those clusters on a host of its own (deploy/local/netns.sh).
# Usage: scripts/client-suite.sh [split|combined|split,combined]   (default split,combined)
set -euo pipefail
cd "$(dirname "$0")/.."
servers=$(echo "${1:-split,combined}" | tr , ' ')
for server in $servers; do
  case "$server" in
    split|combined) ;;
    *) echo "usage: $0 [split|combined|split,combined] (not: $server)" >&2; exit 2 ;;
  esac
done
mvn -B -ntp -q -DskipTests install
classes=$(grep -l 'extends SharedServer' integration-tests/src/test/java/io/sluice/it/*IT.java \
  | xargs -n1 basename | sed 's/\.java$//' | paste -sd, -)
rc=0
for server in $servers; do
  echo "=== the client suites on the $server topology: $classes"
  SLUICE_REQUIRE_TOOLS=1 mvn -B -ntp verify -pl integration-tests -Dsluice.server="$server" -Dtest=NoSuchTest \
    -Dsluice.netns="$([ "${SLUICE_NETNS:-0}" = 1 ] && echo true || echo false)" \
    -Dsurefire.failIfNoSpecifiedTests=false -Dit.test="$classes" -Dfailsafe.failIfNoSpecifiedTests=false || rc=1
done
exit $rc
