#!/usr/bin/env bash
# End-to-end load against one combined node on loopback (`sluice node`: a one-member metadata group, one shard of one
# replica, the frontend), i.e. `sluice dev`'s workload on the cluster's path (Ratis log, ShardStateMachine, the
# frontend reaching its local leader in process): the row to set against scripts/load-e2e.sh (`sluice dev`: the same
# path over a local log instead of a one-replica Raft log). Builds unless SLUICE_LOAD_NO_BUILD is set, starts the node
# (by PID), runs the load generator for a bounded time, prints its figures, stops the node.
# Usage: scripts/load-one-node.sh [LoadGenerator flags], e.g. --warmup 45 --seconds 30 --producers 8 --consumers 8
# Environment: SLUICE_JAR (default broker-server/target/sluice.jar), SLUICE_LOAD_PORT (default 19524; the node also
# uses the next port for admin and +50/+60 for Raft), SLUICE_JAVA_OPTS.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/load-common.sh
build_load_classpath
data=$(mktemp -d)
port=${SLUICE_LOAD_PORT:-19524}
jar=${SLUICE_JAR:-broker-server/target/sluice.jar}
# /admin/status open without a token (sluice.admin.read-auth=false): a throwaway node whose admin port is on loopback
# shellcheck disable=SC2086 # SLUICE_JAVA_OPTS is a list of JVM flags
SLUICE_ADMIN_READ_AUTH=false SLUICE_SHARDS=1 SLUICE_REPLICATION_FACTOR=1 SLUICE_ACCESS_LOG_LEVEL=OFF java ${SLUICE_JAVA_OPTS:-} -jar "$jar" node \
  --node-id n1 --metadata-peers "n1=127.0.0.1:$((port + 50))" --raft-port $((port + 60)) \
  --port "$port" --admin-port $((port + 1)) --data-dir "$data/data" \
  --access-key "${SLUICE_ACCESS_KEY:-sluice}" --secret-key "${SLUICE_SECRET_KEY:-sluice-dev-secret}" \
  > "$data/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$data"' EXIT
hosted=0
for _ in $(seq 1 900); do # a ceiling for a node that hangs, not for a slow machine
  kill -0 "$pid" 2>/dev/null || break # it stopped (a port taken, a bad flag): its log says why
  hosted=$(curl -sf "http://127.0.0.1:$((port + 1))/admin/status" 2>/dev/null | grep -o '"groupId"' | wc -l || true)
  [ "${hosted:-0}" -ge 1 ] && break
  sleep 0.2
done
if [ "${hosted:-0}" -lt 1 ]; then
  echo "the node did not host its shard; its log:" >&2
  tail -20 "$data/server.log" >&2
  exit 1
fi
run_load --endpoint "http://127.0.0.1:$port" --pid "$pid" "$@"
