#!/usr/bin/env bash
# The floor under every replicated write: bare Ratis (3 replicas in one JVM, a state machine that applies nothing)
# over its gRPC transport (Sluice's) and its Netty transport; prints entries/s and CPU per entry for a few shapes.
# Usage: scripts/bench-ratis.sh [SECONDS per round, default 15]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
mvn -B -q -ntp -pl broker-backend -am test-compile dependency:build-classpath \
  -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
cp="broker-backend/target/test-classes:broker-backend/target/classes:$(cat broker-backend/target/bench.classpath)"
for shape in "1 10240" "16 10240" "64 1024"; do
  for transport in grpc netty; do
    # shellcheck disable=SC2086
    java -Xmx1g -XX:+UseSerialGC -cp "$cp" io.sluice.backend.bench.RatisTransportBench "$transport" "$seconds" $shape \
      2>/dev/null | grep measured
  done
done
