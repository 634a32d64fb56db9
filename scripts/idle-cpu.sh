#!/usr/bin/env bash
# What an idle cluster costs: starts deploy/local/cluster.sh (combined by default), lets it settle, then reads every
# process's and every thread's CPU time from /proc over a window with nothing to do, and prints the cluster's CPU as
# a share of one core, per process and per thread group (thread names with their numbers taken out: "grpc-default-
# executor-12" counts as "grpc-default-executor-N"), with each group's wake-ups a second (voluntary context switches).
# Issue 46's target: an idle 3-node cluster under 5 % of a core.
# Usage: scripts/idle-cpu.sh [SETTLE_SECONDS [WINDOW_SECONDS]]   (default 240 and 60)
# Environment: SLUICE_TOPOLOGY (combined, the default here, or split), SLUICE_SHARDS, SLUICE_JAR, SLUICE_JAVA_OPTS,
# SLUICE_CLUSTER_BASE_PORT as deploy/local/cluster.sh takes them.
set -euo pipefail
cd "$(dirname "$0")/.."
settle=${1:-240}
window=${2:-60}
export SLUICE_TOPOLOGY=${SLUICE_TOPOLOGY:-combined}
dir=$(mktemp -d /tmp/sluice-idle.XXXXXX)
trap 'deploy/local/cluster.sh stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
deploy/local/cluster.sh start "$dir" >/dev/null
echo "cluster ($SLUICE_TOPOLOGY, ${SLUICE_SHARDS:-6} shards) up; settling ${settle} s, then measuring ${window} s"
sleep "$settle"
hz=$(getconf CLK_TCK)
snapshot() { # snapshot FILE: "process tid name ticks" for every thread of every process of the cluster
  local out=$1
  : > "$out"
  for pidfile in "$dir"/*.pid; do
    pid=$(cat "$pidfile")
    for stat in /proc/"$pid"/task/*/stat; do
      # comm is in parentheses and may hold spaces: take what lies between the first "(" and the last ")"
      line=$(cat "$stat" 2>/dev/null) || continue
      name=${line#*(}
      name=${name%)*}
      rest=${line##*) }
      set -- $rest
      tid=${stat#/proc/*/task/}; tid=${tid%/stat}
      switches=$(awk '/^voluntary_ctxt_switches/ { print $2 }' /proc/"$pid"/task/"$tid"/status 2>/dev/null || echo 0)
      echo "$(basename "$pidfile" .pid) $tid ${name// /_} $(( ${12} + ${13} )) ${switches:-0}" >> "$out"
    done
  done
}
snapshot "$dir/before"
sleep "$window"
snapshot "$dir/after"
awk -v hz="$hz" -v window="$window" -v groups="$dir/groups" '
  FNR == NR { before[$1 " " $2] = $4; beforeWakes[$1 " " $2] = $5; next }
  {
    ticks = $4 - (($1 " " $2) in before ? before[$1 " " $2] : 0)
    wakes = $5 - (($1 " " $2) in beforeWakes ? beforeWakes[$1 " " $2] : 0)
    group = $3; gsub(/@group-[0-9A-Fa-f]+/, "@group-X", group); gsub(/[0-9]+/, "N", group)
    proc[$1] += ticks; grp[group] += ticks; total += ticks; grpWakes[group] += wakes; allWakes += wakes
  }
  END {
    printf "idle cluster: %.1f %% of a core over %d s, %.0f wake-ups a second\n", 100 * total / hz / window, window, allWakes / window
    for (p in proc) printf "  %-12s %5.1f %%\n", p, 100 * proc[p] / hz / window
    for (g in grp) if (grp[g] > 0 || grpWakes[g] > 0) printf "%.2f %s %.1f\n", 100 * grp[g] / hz / window, g, grpWakes[g] / window > groups
  }' "$dir/before" "$dir/after"
echo "by thread group (all processes: % of a core, wake-ups a second; the 25 largest by CPU):"
sort -rn "$dir/groups" | head -25 | awk '{ printf "  %6.2f  %7.1f/s  %s\n", $1, $3, $2 }'
echo "by wake-ups (the 15 most frequent):"
sort -k3 -rn "$dir/groups" | head -15 | awk '{ printf "  %7.1f/s  %6.2f  %s\n", $3, $1, $2 }'
