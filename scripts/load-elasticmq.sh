#!/usr/bin/env bash
# The same load against ElasticMQ (org.elasticmq:elasticmq-server_2.13:1.6.14 from Maven Central), for comparison:
# an in-memory SQS emulator, no replication and no disk.
# Usage: scripts/load-elasticmq.sh [LoadGenerator flags]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/load-common.sh
build_load_classpath
work=$(mktemp -d)
cat > "$work/pom.xml" <<'POM'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local</groupId><artifactId>elasticmq-runner</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.elasticmq</groupId><artifactId>elasticmq-server_2.13</artifactId><version>1.6.14</version></dependency>
  </dependencies>
</project>
POM
(cd "$work" && mvn -B -q -ntp dependency:build-classpath -Dmdep.outputFile=cp.txt)
port=${ELASTICMQ_PORT:-19324}
cat > "$work/elasticmq.conf" <<CONF
include classpath("application.conf")
rest-sqs { enabled = true, bind-port = $port, bind-hostname = "127.0.0.1", sqs-limits = strict }
rest-stats.enabled = false
CONF
java -Dconfig.file="$work/elasticmq.conf" -cp "$(cat "$work/cp.txt")" org.elasticmq.server.Main > "$work/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 150); do
  curl -s -o /dev/null "http://127.0.0.1:$port/" && break
  sleep 0.2
done
run_load --endpoint "http://127.0.0.1:$port" --pid "$pid" "$@"
