#!/usr/bin/env bash
# End-to-end load against a fresh 3/3/2 cluster (deploy/local/cluster.sh) on loopback: producers and consumers spread
# over both frontends; the CPU figure covers all 8 server processes. Stops the cluster afterwards.
# Usage: scripts/load-cluster.sh [LoadGenerator flags], e.g. --seconds 20 --producers 8 --consumers 8
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/load-common.sh
build_load_classpath
dir=$(mktemp -d)
trap 'deploy/local/cluster.sh stop "$dir" >/dev/null 2>&1 || true; if [ -n "${SLUICE_LOAD_KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi' EXIT
start_local_cluster "$dir"
run_load "${endpoints[@]}" --pid-dir "$dir" "$@"
