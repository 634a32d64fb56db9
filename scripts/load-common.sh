# Shared by the load scripts: build once, then run io.sluice.it.LoadGenerator with the test classpath.
build_load_classpath() {
  if [ -z "${SLUICE_LOAD_NO_BUILD:-}" ]; then
    mvn -B -q -ntp -DskipTests install
    mvn -B -q -ntp -pl integration-tests test-compile dependency:build-classpath \
      -Dmdep.outputFile=target/load.classpath -Dmdep.includeScope=test
  fi
}

run_load() {
  java -Xmx2g -cp "integration-tests/target/test-classes:$(cat integration-tests/target/load.classpath)" \
    io.sluice.it.LoadGenerator "$@"
}

# start_local_cluster DIR: a fresh deploy/local/cluster.sh in DIR (the caller's trap stops it); sets endpoints to
# "--endpoint URL" for each SQS endpoint it printed.
start_local_cluster() {
  local dir=$1
  SLUICE_CLUSTER_BASE_PORT=${SLUICE_CLUSTER_BASE_PORT:-19000} deploy/local/cluster.sh start "$dir" > "$dir/endpoints"
  endpoints=()
  for url in $(grep '^http' "$dir/endpoints"); do
    endpoints+=(--endpoint "$url")
  done
}
