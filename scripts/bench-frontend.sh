#!/usr/bin/env bash
# Runs the frontend's request-path benchmarks (JMH): SigV4 verification and body validation of one SendMessageBatch.
# Usage: scripts/bench-frontend.sh [JMH args, e.g. RequestPathBenchmark.verify]
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -ntp -pl broker-frontend -am test-compile dependency:build-classpath \
  -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
cp="broker-frontend/target/test-classes:broker-frontend/target/classes:$(cat broker-frontend/target/bench.classpath)"
java -cp "$cp" org.openjdk.jmh.Main "${@:-RequestPathBenchmark}"
