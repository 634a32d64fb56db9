#!/usr/bin/env bash
# Runs the partition engine benchmarks (JMH) and the index memory footprint, printing figures.
# Usage: scripts/bench-engine.sh [JMH args, e.g. -p deletedBefore=0,1000000 PartitionEngineBenchmark.receive]
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -ntp -pl broker-backend -am test-compile dependency:build-classpath \
  -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
cp="broker-backend/target/test-classes:broker-backend/target/classes:$(cat broker-backend/target/bench.classpath)"
java -cp "$cp" org.openjdk.jmh.Main "$@"
java -Xmx4g -cp "$cp" io.sluice.backend.bench.IndexFootprint 1000000
