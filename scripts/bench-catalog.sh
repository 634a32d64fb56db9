#!/usr/bin/env bash
# What a catalog of many queues costs (issue 16): a 3-member metadata group in one JVM (real Ratis on loopback),
# QUEUES queues created through it, then one role's catalog cache: the whole image, a delta after one change, the
# idle check; bytes, CPU and heap. Prints figures.
# Usage: scripts/bench-catalog.sh [QUEUES (default 100000)]; BENCH_NODES=N registers N live backend nodes first, so
# every create places its partition on them (unsharded placement)
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -ntp -pl broker-metadata -am test-compile dependency:build-classpath \
  -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
cp="broker-metadata/target/test-classes:broker-metadata/target/classes:$(cat broker-metadata/target/bench.classpath)"
java -Xmx2g ${BENCH_NODES:+-Dbench.nodes=$BENCH_NODES} -cp "$cp" io.sluice.metadata.raft.CatalogScaleBench "${1:-100000}"
