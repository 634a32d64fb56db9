#!/usr/bin/env bash
# End-to-end load against a fresh `sluice dev` on loopback: builds, starts the server (by PID), runs the load
# generator (AWS SDK v2 async client) for a bounded time, prints figures including the server's CPU per 1,000
# messages, stops the server.
# Usage: scripts/load-e2e.sh [LoadGenerator flags], e.g. --seconds 20 --producers 8 --consumers 8 --batch 10 --body 1024
# Environment: SLUICE_JAR (default broker-server/target/sluice.jar: another build's jar, for an old-against-new row),
# SLUICE_LOAD_PORT (default 19424; the admin endpoint takes the next port).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/load-common.sh
build_load_classpath
data=$(mktemp -d)
port=${SLUICE_LOAD_PORT:-19424}
jar=${SLUICE_JAR:-broker-server/target/sluice.jar}
SLUICE_ACCESS_LOG_LEVEL=OFF java -jar "$jar" dev --port "$port" --admin-port $((port + 1)) \
  --data-dir "$data" > "$data/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$((port + 1))/health" >/dev/null && break
  sleep 0.2
done
run_load --endpoint "http://127.0.0.1:$port" --pid "$pid" "$@"
