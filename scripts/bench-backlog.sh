#!/usr/bin/env bash
# A backlog costs disk, not heap (issue 16): `sluice dev` with -Xmx256m, COUNT queued messages of BODY bytes.
# Prints the heap per queued message after full GCs, receive+delete throughput with that backlog against a queue
# with a small one (same run), the time a restart takes to serve again, and the count read back after it.
# Usage: scripts/bench-backlog.sh [COUNT (default 1000000)] [BODY bytes (default 1024)]
#   The issue's figures: 10000000 1024 (~11 GB of disk); the long form 100000000 64. Mind the free disk.
#   BENCH_FIFO=1: FIFO queues (64 message groups, a deduplication id per message); each heap figure is then taken
#   after the 5-minute deduplication window has passed (its entries are held in memory by design while it lasts),
#   so a FIFO run takes ~11 minutes more; a fill faster than the heap holds 5 minutes of entries for needs
#   BENCH_XMX (default 256m), e.g. BENCH_XMX=1g.
#   BENCH_KIND (issue 41) is the kind of backlog (standard queues but for fifowindow):
#     fresh       sent and waiting (the default)
#     delayed     sent with DelaySeconds=BENCH_DELAY (default 60); measured once due
#     lapsed      sent, then received (COUNT receives, 5 s visibility timeout) and never deleted; measured once every
#                 lease lapsed
#     deadletter  dead letters: sent to backlog-src (maxReceiveCount 1, redrive to the backlog queue) and received
#                 until every one is in the dead-letter queue; prints the dead-letter rate
#     fifowindow  a FIFO queue (implies BENCH_FIFO=1) with SluiceReorderWindowMillis=BENCH_WINDOW (default 2000) and
#                 DelaySeconds=BENCH_DELAY (default 60), its messages out of producer order by up to 1 s; measured
#                 once due; then the delay and the window change (to half each) and the heap is measured again. The
#                 small queue has the same settings. Fill at BENCH_RATE msg/s (default 1500 for this kind: the
#                 5-minute deduplication window's entries of a faster fill do not fit a 256 MB heap)
#   SLUICE_JAR and SLUICE_BENCH_CP (with SLUICE_LOAD_NO_BUILD=1): run a copy of the server jar and of the bench's
#   classpath, so that a build during a long run cannot replace the classes under the running JVMs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/load-common.sh
count=${1:-1000000}
body=${2:-1024}
build_load_classpath
data=$(mktemp -d)
port=${SLUICE_LOAD_PORT:-19434}
admin="http://127.0.0.1:$((port + 1))"
endpoint="http://127.0.0.1:$port"
pid=
start() {
  SLUICE_ACCESS_LOG_LEVEL=OFF java "-Xmx${BENCH_XMX:-256m}" -jar "${SLUICE_JAR:-broker-server/target/sluice.jar}" dev \
    --port "$port" \
    --admin-port $((port + 1)) --data-dir "$data/dev" >> "$data/server.log" 2>&1 &
  pid=$!
}
stop() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; fi
}
trap 'stop; rm -rf "$data"' EXIT
bench() {
  java -Xmx1g -cp "${SLUICE_BENCH_CP:-integration-tests/target/test-classes:$(cat integration-tests/target/load.classpath)}" \
    io.sluice.it.BacklogBench "$@"
}
await_serving() { # until a queue's count can be read (bounded: 120 s)
  for _ in $(seq 1 600); do
    if curl -sf "$admin/health" >/dev/null && bench count "$endpoint" "$1" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "not serving after 120 s" >&2; return 1
}

start
for _ in $(seq 1 600); do curl -sf "$admin/health" >/dev/null && break; sleep 0.2; done
kind=${BENCH_KIND:-fresh}
case "$kind" in fresh|delayed|lapsed|deadletter|fifowindow) ;;
  *) echo "BENCH_KIND: fresh, delayed, lapsed, deadletter or fifowindow" >&2; exit 2 ;; esac
small_delay=-1
if [ "$kind" = fifowindow ]; then
  BENCH_FIFO=1
  export BENCH_WINDOW=${BENCH_WINDOW:-2000} BENCH_RATE=${BENCH_RATE:-1500}
  small_delay=${BENCH_DELAY:-60}
fi
q=${BENCH_FIFO:+.fifo}
if [ -n "$q" ] && [ "$kind" != fresh ] && [ "$kind" != fifowindow ]; then
  echo "BENCH_KIND delayed, lapsed and deadletter are for standard queues" >&2; exit 2
fi
window() { # FIFO: until the deduplication window of every send so far has passed and been swept
  if [ -n "$q" ]; then sleep 320; fi
}
bench fill "$endpoint" "warmup$q" 20000 "$body" > /dev/null
bench drain "$endpoint" "warmup$q" 30 > /dev/null
echo "small backlog: fill $(bench fill "$endpoint" "small$q" 60000 "$body" "$small_delay") msg/s"
if [ "$small_delay" -gt 0 ]; then sleep $((small_delay + 5)); fi
small_rate=$(bench drain "$endpoint" "small$q" 15)
echo "small backlog: receive+delete $small_rate msg/s"
window
heap_before=$(bench heap "$admin" "$pid")
case "$kind" in
  fresh) echo "backlog of $count x $body B: fill $(bench fill "$endpoint" "backlog$q" "$count" "$body") msg/s" ;;
  delayed)
    delay=${BENCH_DELAY:-60}
    echo "backlog of $count x $body B, delayed $delay s: fill $(bench fill "$endpoint" backlog "$count" "$body" "$delay") msg/s"
    sleep $((delay + 5)) ;;
  lapsed)
    echo "backlog of $count x $body B: fill $(bench fill "$endpoint" backlog "$count" "$body") msg/s"
    echo "received (5 s visibility, never deleted): $(bench lease "$endpoint" backlog 5 "$count") times"
    sleep 10 ;;
  deadletter)
    echo "$count dead letters x $body B: dead-lettered at $(bench deadletter "$endpoint" backlog "$count" "$body") msg/s" ;;
  fifowindow)
    delay=${BENCH_DELAY:-60}
    echo "backlog of $count x $body B, FIFO, window $BENCH_WINDOW ms, delay $delay s, at most $BENCH_RATE msg/s:" \
      "fill $(bench fill "$endpoint" "backlog$q" "$count" "$body" "$delay") msg/s"
    sleep $((delay + 5)) ;;
esac
window
heap_after=$(bench heap "$admin" "$pid")
echo "heap after full GC: $heap_before B before, $heap_after B with the $kind backlog:" \
  "$(( (heap_after - heap_before) / count )) B per queued message"
if [ "$kind" = fifowindow ]; then
  bench configure "$endpoint" "backlog$q" "DelaySeconds=$((delay / 2))" "SluiceReorderWindowMillis=$((BENCH_WINDOW / 2))" > /dev/null
  sleep 15 # every partition applies it (the shard's reconcile)
  heap_changed=$(bench heap "$admin" "$pid")
  echo "delay and window halved with the backlog queued: $heap_changed B after full GC," \
    "$(( (heap_changed - heap_before) / count )) B per queued message"
fi
backlog_rate=$(bench drain "$endpoint" "backlog$q" 15)
echo "backlog: receive+delete $backlog_rate msg/s ($(awk -v a="$backlog_rate" -v b="$small_rate" 'BEGIN{printf "%.2f", a/b}') of the small backlog's)"
left=$(bench count "$endpoint" "backlog$q")
echo "disk: $(du -sh "$data/dev" | cut -f1) for the data folder"
stop
started=$(date +%s.%N)
start
await_serving "backlog$q"
echo "restart to serving: $(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}') s"
after=$(bench count "$endpoint" "backlog$q")
echo "count back: $left before the restart, $after after"
[ "$left" = "$after" ] || { echo "COUNT MISMATCH" >&2; exit 1; }
