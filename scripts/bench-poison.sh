#!/usr/bin/env bash
# A poison flood (issue 41): producers send at full rate into a queue with maxReceiveCount 1 whose consumers never
# delete, so every message goes to its dead-letter queue. Prints, every 10 s, the send rate, the rate the dead-letter
# queue fills at and the pending hand-offs; then the totals, counted back once the source has drained (exit 1 when
# the dead-letter queue and the source do not add up to what was sent).
# Usage: scripts/bench-poison.sh [dev|combined] [SECONDS (default 300)] [BODY bytes (default 1024)]
#   dev: `sluice dev` (BENCH_XMX heap, default 256m); combined: a 3-node combined cluster (deploy/local/cluster.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/load-common.sh
mode=${1:-dev}
seconds=${2:-300}
body=${3:-1024}
case "$mode" in dev|combined) ;; *) echo "usage: $0 [dev|combined] [SECONDS] [BODY]" >&2; exit 2 ;; esac
build_load_classpath
data=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if [ "$mode" = combined ]; then deploy/local/cluster.sh stop "$data" >/dev/null 2>&1 || true; fi
  rm -rf "$data"
}
trap cleanup EXIT
if [ "$mode" = dev ]; then
  port=${SLUICE_LOAD_PORT:-19434}
  endpoint="http://127.0.0.1:$port"
  admins="http://127.0.0.1:$((port + 1))"
  SLUICE_ACCESS_LOG_LEVEL=OFF java "-Xmx${BENCH_XMX:-256m}" -jar "${SLUICE_JAR:-broker-server/target/sluice.jar}" dev \
    --port "$port" \
    --admin-port $((port + 1)) --data-dir "$data/dev" >> "$data/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do curl -sf "$admins/health" >/dev/null && break; sleep 0.2; done
else
  base=${SLUICE_CLUSTER_BASE_PORT:-19000}
  SLUICE_TOPOLOGY=combined start_local_cluster "$data"
  endpoint=${endpoints[1]}
  admins="http://127.0.0.1:$((base + 311)),http://127.0.0.1:$((base + 312)),http://127.0.0.1:$((base + 313))"
fi
java -Xmx1g -cp "integration-tests/target/test-classes:$(cat integration-tests/target/load.classpath)" \
  io.sluice.it.BacklogBench poison "$endpoint" "$admins" poison "$seconds" "$body"
