#!/usr/bin/env bash
# End-to-end load against a fresh `sluice dev` on loopback: builds, starts the server (by PID), runs the load
# generator for a bounded time, prints figures, stops the server.
# Usage: scripts/load-e2e.sh [seconds=20] [producers=4] [consumers=4] [batch=10] [body-bytes=1024]
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -ntp -DskipTests install
mvn -B -q -ntp -pl integration-tests dependency:build-classpath -Dmdep.outputFile=target/load.classpath \
  -Dmdep.includeScope=test
data=$(mktemp -d)
port=19424
SLUICE_ACCESS_LOG_LEVEL=OFF java -jar broker-server/target/sluice.jar dev --port $port --admin-port $((port + 1)) --data-dir "$data" \
  > "$data/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$((port + 1))/health" >/dev/null && break
  sleep 0.2
done
java -cp "integration-tests/target/test-classes:$(cat integration-tests/target/load.classpath)" \
  io.sluice.it.LoadGenerator "http://127.0.0.1:$port" "${1:-20}" "${2:-4}" "${3:-4}" "${4:-10}" "${5:-1024}"
