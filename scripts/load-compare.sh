#!/usr/bin/env bash
# Old jar against new, side by side in one session (only ratios from one session count on this machine): the same
# load on `sluice dev` and on the combined 3-node cluster, each row run with the old jar and then the new one, twice
# (old, new, old, new), so a drift of the machine's speed during the session shows in both.
# Usage: scripts/load-compare.sh OLD_JAR [LoadGenerator flags], e.g.
#   scripts/load-compare.sh /tmp/old/broker-server/target/sluice.jar --warmup 45 --seconds 30 --producers 8 \
#     --consumers 8 --max-backlog 2000 --drain 60
# Build the old jar from another worktree without installing it (`git worktree add /tmp/old <commit>`, then in it
# `mvn -o -q package -DskipTests -pl broker-server -am`); the new jar is this repository's (built here).
# Environment: SLUICE_COMPARE_ROWS (default "dev combined"; "one-node" and "split" also work).
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: scripts/load-compare.sh OLD_JAR [LoadGenerator flags]}
shift
[ -f "$old" ] || { echo "no jar at $old" >&2; exit 1; }
old=$(cd "$(dirname "$old")" && pwd)/$(basename "$old")
new=$(pwd)/broker-server/target/sluice.jar
source scripts/load-common.sh
build_load_classpath
export SLUICE_LOAD_NO_BUILD=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
row() { # row NAME JAR FLAGS...
  local name=$1 jar=$2
  shift 2
  case $name in
    dev) SLUICE_JAR=$jar scripts/load-e2e.sh --idle 10 "$@" ;;
    one-node) SLUICE_JAR=$jar scripts/load-one-node.sh --idle 10 "$@" ;;
    combined) SLUICE_JAR=$jar SLUICE_TOPOLOGY=combined scripts/load-cluster.sh --idle 10 "$@" ;;
    split) SLUICE_JAR=$jar SLUICE_TOPOLOGY=split scripts/load-cluster.sh --idle 10 "$@" ;;
    *) echo "unknown row $name" >&2; return 1 ;;
  esac
}
for name in ${SLUICE_COMPARE_ROWS:-dev combined}; do
  for round in 1 2; do
    for which in old new; do
      jar=$old
      [ "$which" = new ] && jar=$new
      echo "=== $name $which (round $round)"
      row "$name" "$jar" "$@" | tee "$out/$name-$which-$round.txt" || true # a trap may end it non-zero
    done
  done
done
echo "=== summary (end to end msg/s | server CPU s per 1,000 messages | idle CPU)"
for f in "$out"/*.txt; do
  printf '%-22s | %s | %s | %s\n' "$(basename "$f" .txt)" \
    "$(grep -m1 'end to end  ' "$f" | awk '{print $4}')" \
    "$(grep -m1 'CPU s per 1,000' "$f" | sed -E 's/.*server ([0-9.]+).*/\1/')" \
    "$(grep -m1 'idle server CPU' "$f" | sed -E 's/.*load: ([0-9.]+%).*/\1/' || true)"
done
