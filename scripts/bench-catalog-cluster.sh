#!/usr/bin/env bash
# A catalog of QUEUES queues on the local cluster (issue 16): a fresh deploy/local/cluster.sh (split 3/3/2, TLS off on
# the Raft ports so that the bench reaches the metadata group), QUEUES queues created through the metadata group
# (CatalogScaleBench with PEERS: the SQS API creates 10-30 queues/s on this machine, hours for 100,000; the backends
# then create the partitions from the catalog by themselves), then each process's heap after a full GC and CPU over
# 60 s, before and after; how long a queue deleted through one frontend is still served by the other; and what the web
# console's queue list costs over them all (sorted by name, by depth, filtered: wall time per view, 5 of each).
# Usage: scripts/bench-catalog-cluster.sh [QUEUES (default 100000)]
set -euo pipefail
cd "$(dirname "$0")/.."
queues=${1:-100000}
mvn -B -q -ntp -DskipTests install
mvn -B -q -ntp -pl broker-metadata test-compile dependency:build-classpath \
  -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
cp="broker-metadata/target/test-classes:broker-metadata/target/classes:$(cat broker-metadata/target/bench.classpath)"
dir=$(mktemp -d)
trap 'deploy/local/cluster.sh stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
base=${SLUICE_CLUSTER_BASE_PORT:-19000}
SLUICE_CLUSTER_TLS=off SLUICE_CLUSTER_BASE_PORT=$base deploy/local/cluster.sh start "$dir" > "$dir/endpoints"
peers="m1=127.0.0.1:$((base + 101)),m2=127.0.0.1:$((base + 102)),m3=127.0.0.1:$((base + 103))"
tick=$(getconf CLK_TCK)

# per process: heap in use after a full GC (young + old generation), and CPU % of a core over the next SECONDS
measure() {
  local label=$1 seconds=$2
  declare -A cpu0
  for pidfile in "$dir"/*.pid; do
    pid=$(cat "$pidfile")
    cpu0[$pid]=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  done
  sleep "$seconds"
  echo "== $label"
  for pidfile in "$dir"/*.pid; do
    pid=$(cat "$pidfile")
    cpu1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    jcmd "$pid" GC.run >/dev/null
    heap=$(jcmd "$pid" GC.heap_info | grep generation | grep -oE 'used [0-9]+K' | grep -oE '[0-9]+' \
      | awk '{s += $1} END {printf "%.1f", s / 1024}')
    printf "  %-12s heap after GC %7s MB, CPU over %d s: %5.1f %% of a core\n" "$(basename "$pidfile" .pid)" \
      "$heap" "$seconds" "$(echo "(${cpu1} - ${cpu0[$pid]}) * 100 / $tick / $seconds" | bc -l)"
  done
}

measure "empty catalog" 30
java -Xmx2g -cp "$cp" io.sluice.metadata.raft.CatalogScaleBench "$queues" "$peers" 2>&1 | grep -v ' INFO '
measure "$queues queues, the first minute after" 60
measure "$queues queues, idle" 60

fe1=$(grep '^http' "$dir/endpoints" | sed -n 1p)
fe2=$(grep '^http' "$dir/endpoints" | sed -n 2p)
python3 - "$fe1" "$fe2" <<'PY'
import sys, time, boto3
def client(url):
    return boto3.client("sqs", endpoint_url=url, region_name="us-east-1", aws_access_key_id="sluice",
                        aws_secret_access_key="sluice-dev-secret")
one, two = client(sys.argv[1]), client(sys.argv[2])
url = two.get_queue_url(QueueName="queue-0")["QueueUrl"]  # the second frontend serves it
one.delete_queue(QueueUrl=url)
start = time.monotonic()
while True:
    try:
        two.get_queue_url(QueueName="queue-0")
    except two.exceptions.QueueDoesNotExist:
        break
    time.sleep(0.02)
print("== a queue deleted through one frontend was no longer served by the other after %.0f ms"
      % ((time.monotonic() - start) * 1000))
PY
admin1="http://127.0.0.1:$((base + 311))"
python3 - "$admin1" <<'PY'
import re, sys, time, urllib.request, urllib.parse, http.cookiejar
base = sys.argv[1]
jar = http.cookiejar.CookieJar()
web = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
login = web.open(base + "/console/login").read().decode()
token = re.search(r'name="csrf" value="([0-9a-f]{64})"', login).group(1)
form = urllib.parse.urlencode({"csrf": token, "access_key": "sluice", "secret_key": "sluice-dev-secret"}).encode()
web.open(urllib.request.Request(base + "/console/login", data=form, headers={"Origin": base}))
for label, query in [("by name", ""), ("by depth", "?sort=visible"), ("filtered", "?filter=queue-9999")]:
    times = []
    for _ in range(5):
        start = time.monotonic()
        page = web.open(base + "/console/live/queues" + query).read().decode()
        times.append((time.monotonic() - start) * 1000)
        time.sleep(2.5)  # past the list's 2 s sample reuse: each view takes a new sample
    count = re.search(r'id="queue-count">([^<.]*)', page).group(1)
    print("== console queue list %-8s (%s): %s ms per view, median %.0f" % (label, count,
          ", ".join("%.0f" % t for t in times), sorted(times)[2]))
PY
