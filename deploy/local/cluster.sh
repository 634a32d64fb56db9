#!/usr/bin/env bash
# A local Sluice cluster on loopback: 3 metadata members, 3 backends, 2 frontends, each a JVM from the built jar
# (the split topology, the default); or, with SLUICE_TOPOLOGY=combined, 3 nodes that each run all three roles.
#
#   deploy/local/cluster.sh start DIR    start it (data and logs under DIR, pids in DIR/<role>-<n>.pid, or
#                                        DIR/node-<n>.pid when combined), print each frontend's (node's) SQS endpoint
#                                        URL, return once the cluster serves
#   deploy/local/cluster.sh status DIR   each process alive or not, then the cluster status
#   deploy/local/cluster.sh stop DIR     stop every process (SIGTERM, then SIGKILL after 30 s)
#
# Environment: SLUICE_ACCESS_KEY / SLUICE_SECRET_KEY (credentials the frontends accept; default sluice /
# sluice-dev-secret), SLUICE_CLUSTER_BASE_PORT (default 19000), SLUICE_SHARDS (default 6), SLUICE_JAR (default the
# repository's broker-server/target/sluice.jar, built if missing), SLUICE_JAVA_OPTS (JVM flags of every process;
# default -Xmx512m -XX:+UseSerialGC, a combined node -Xmx1g -XX:+UseG1GC), SLUICE_TOPOLOGY (split, the default, or
# combined). This interface is a contract: keep it.
#
# Ports (B = the base port): split: metadata Raft B+101..103 and admin B+111..113, backend Raft B+201..203 and admin
# B+211..213, frontend SQS B+301..302 and admin B+311..312. Combined: node n has metadata Raft B+100+n, shard Raft
# B+200+n, SQS B+300+n, admin B+310+n.
#
# The processes speak Raft over mutual TLS: on its first start the script makes a throwaway CA and one certificate per
# process under DIR/tls (deploy/tls/make-certs.sh; needs openssl). SLUICE_CLUSTER_TLS=off runs plaintext Raft instead
# (to measure what TLS costs).
#
# GET /metrics and /admin/status need a token outside sluice dev: the first start writes a random read token to
# DIR/read-token (owner-only) and every process reads it (sluice.admin.read-token-file); Prometheus or curl present it
# as `Authorization: Bearer <token>` (curl -H @DIR/read-token.header), `sluice admin status` as --token-file.
#
# SLUICE_NETNS=1 (root, iproute2 and iptables): every process (split) or node (combined) runs on a host of its own, a
# network namespace with its own address on a private bridge (deploy/local/netns.sh; network SLUICE_NETNS_NET, default
# 200 + (B / 100) % 50, addresses 10.231.NET.11 upwards), as on separate machines: each binds its host's address (its
# ports as above), its certificate carries that address, and the endpoints printed are those addresses (this machine
# reaches every host). The hosts are named after the processes (metadata-1, backend-2, frontend-1, node-3), so
# `deploy/local/netns.sh isolate NET backend-1` cuts one off. The credentials' default secret is a documented
# placeholder, refused beyond loopback: without SLUICE_SECRET_KEY the first start writes a random one to
# DIR/secret-key (owner-only; the access key stays "sluice"). `stop` also removes the hosts, even after a crash.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop|status DIR" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
jar=${SLUICE_JAR:-$root/broker-server/target/sluice.jar}
base=${SLUICE_CLUSTER_BASE_PORT:-19000}
shards=${SLUICE_SHARDS:-6}
java_bin=${JAVA_HOME:+$JAVA_HOME/bin/}java
java_opts=${SLUICE_JAVA_OPTS:--Xmx512m -XX:+UseSerialGC}
# a combined node holds all three roles: twice the heap of one, and G1, whose old generation is collected
# concurrently: a serial full collection of that heap under load took 1.1 s here, past the 500 ms election timeout of
# every group the node follows (docs/performance.md, 2026-12-07 third session)
[ "${SLUICE_TOPOLOGY:-split}" = combined ] && java_opts=${SLUICE_JAVA_OPTS:--Xmx1g -XX:+UseG1GC}
topology=${SLUICE_TOPOLOGY:-split}
case "$topology" in
  split|combined) ;;
  *) echo "SLUICE_TOPOLOGY must be split or combined, not $topology" >&2; exit 2 ;;
esac
netns_sh=$root/deploy/local/netns.sh
netns=${SLUICE_NETNS:-0}
net=${SLUICE_NETNS_NET:-$((200 + (base / 100) % 50))}
# a cluster started on hosts is stopped and asked about on hosts, whatever the environment says now
if [ -f "$dir/netns" ]; then
  netns=1
  net=$(cat "$dir/netns")
fi

# host NAME: the address process NAME binds and is reached at
host() {
  if [ "$netns" = 1 ]; then
    "$netns_sh" address "$net" "$1"
  else
    echo 127.0.0.1
  fi
}

# the metadata group's members (ids m1..m3, or n1..n3 when combined), at their hosts' addresses
metadata_peers() {
  local out="" id name
  for n in 1 2 3; do
    if [ "$topology" = combined ]; then id=n$n name=node-$n; else id=m$n name=metadata-$n; fi
    out="$out${out:+,}$id=$(host "$name"):$((base + 100 + n))"
  done
  echo "$out"
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# launch ROLE N ARGS...: start one process in the background, remember its pid.
launch() {
  local role=$1 n=$2; shift 2
  local pidfile="$dir/$role-$n.pid"
  if alive "$pidfile"; then
    echo "$role-$n already running (pid $(cat "$pidfile"))"
    return
  fi
  mkdir -p "$dir/$role-$n"
  local tls=() prefix=() onhost=()
  if [ "${SLUICE_CLUSTER_TLS:-on}" != off ]; then
    tls=(SLUICE_CLUSTER_TLS_CERT_FILE="$dir/tls/$role-$n.pem" SLUICE_CLUSTER_TLS_KEY_FILE="$dir/tls/$role-$n-key.pem"
      SLUICE_CLUSTER_TLS_CA_FILE="$dir/tls/ca.pem")
  fi
  if [ "$role" = frontend ] || [ "$role" = node ]; then
    tls+=(SLUICE_SECRET_KEY="$frontend_secret")
  fi
  if [ "$netns" = 1 ]; then # on its own host: bind that host's address, the admin endpoint too
    local address
    address=$(host "$role-$n")
    prefix=("$netns_sh" exec "$net" "$role-$n")
    onhost=(--host "$address")
    tls+=(SLUICE_ADMIN_HOST="$address")
  fi
  "${prefix[@]}" env "${tls[@]}" SLUICE_ADMIN_READ_TOKEN_FILE="$dir/read-token" SLUICE_SHARDS=$shards SLUICE_REPLICATION_FACTOR=3 SLUICE_ACCESS_LOG_LEVEL=${SLUICE_ACCESS_LOG_LEVEL:-WARN} \
    nohup "$java_bin" $java_opts -jar "$jar" "$role" "$@" "${onhost[@]}" >"$dir/$role-$n.log" 2>&1 &
  echo $! >"$pidfile"
}

# wait_for URL SECONDS CHECK: poll until the admin URL answers and CHECK (a grep pattern) matches.
wait_for() {
  local url=$1 seconds=$2 pattern=$3
  for _ in $(seq 1 $((seconds * 5))); do
    if curl -sf -H @"$dir/read-token.header" "$url" 2>/dev/null | grep -q -- "$pattern"; then
      return 0
    fi
    sleep 0.2
  done
  echo "timed out waiting for $url" >&2
  return 1
}

# wait_hosting ADMIN_URL NAME: until the process hosts every shard (R = 3 on 3 backends): count the hosted groups in
# its status. The ceilings (180 s) are for a process that hangs, not a slow machine: a start takes 5-20 s on a loaded
# 2-core box.
wait_hosting() {
  local url=$1 name=$2 hosted=0
  for _ in $(seq 1 900); do
    hosted=$(curl -sf -H @"$dir/read-token.header" "$url/admin/status" 2>/dev/null | grep -o '"groupId"' | wc -l || true)
    [ "${hosted:-0}" -ge "$shards" ] && return 0
    sleep 0.2
  done
  echo "$name did not join its shards; see $dir/$name.log" >&2
  exit 1
}

# The read token of /metrics and /admin/status (made once; a header file so that it never shows on a command line).
make_read_token() {
  if [ ! -s "$dir/read-token" ]; then
    (umask 077 && od -An -N24 -tx1 /dev/urandom | tr -d ' \n' >"$dir/read-token.tmp" \
      && mv "$dir/read-token.tmp" "$dir/read-token")
  fi
  (umask 077 && printf 'Authorization: Bearer %s\n' "$(cat "$dir/read-token")" >"$dir/read-token.header")
}

make_certs() {
  if [ "${SLUICE_CLUSTER_TLS:-on}" != off ]; then
    local certs=()
    for name in "$@"; do
      if [ "$netns" = 1 ]; then
        certs+=("$name=IP:$(host "$name")")
      else
        certs+=("$name=IP:127.0.0.1,DNS:localhost")
      fi
    done
    "$root/deploy/tls/make-certs.sh" "$dir/tls" "${certs[@]}"
  fi
}

# make_hosts NAME...: on hosts, one per process (kept when they exist), remembered in DIR/netns for stop and status
make_hosts() {
  if [ "$netns" = 1 ]; then
    "$netns_sh" up "$net" "$@" >/dev/null
    echo "$net" >"$dir/netns"
  fi
}

# The frontends' credentials: the given ones, else the dev ones on loopback, else (on hosts, where the documented
# placeholder secret is refused) a random secret made once in DIR/secret-key. The secret reaches the frontends (and
# nodes) only, in their environment (owner-only in /proc), never on a command line that `ps` shows.
frontend_secret=
keys() {
  local secret=${SLUICE_SECRET_KEY:-}
  if [ -z "$secret" ] && [ "$netns" = 1 ]; then
    if [ ! -s "$dir/secret-key" ]; then
      (umask 077 && od -An -N24 -tx1 /dev/urandom | tr -d ' \n' >"$dir/secret-key.tmp" \
        && mv "$dir/secret-key.tmp" "$dir/secret-key")
    fi
    secret=$(cat "$dir/secret-key")
  fi
  frontend_secret=${secret:-sluice-dev-secret}
}

start_combined() {
  make_read_token
  make_hosts node-1 node-2 node-3
  make_certs node-1 node-2 node-3
  if [ ! -f "$jar" ]; then
    (cd "$root" && mvn -B -q -ntp -DskipTests package)
  fi
  local peers
  keys
  peers=$(metadata_peers)
  for n in 1 2 3; do
    launch node "$n" --node-id "n$n" --metadata-peers "$peers" --raft-port $((base + 200 + n)) \
      --port $((base + 300 + n)) --admin-port $((base + 310 + n)) --data-dir "$dir/node-$n/data" --access-key "${SLUICE_ACCESS_KEY:-sluice}"
  done
  for n in 1 2 3; do
    wait_for "http://$(host "node-$n"):$((base + 310 + n))/health" 180 OK
  done
  for n in 1 2 3; do
    wait_hosting "http://$(host "node-$n"):$((base + 310 + n))" "node-$n"
  done
  for n in 1 2 3; do
    echo "http://$(host "node-$n"):$((base + 300 + n))"
  done
}

start() {
  mkdir -p "$dir"
  if [ "$topology" = combined ]; then
    start_combined
    return
  fi
  make_read_token
  make_hosts metadata-1 metadata-2 metadata-3 backend-1 backend-2 backend-3 frontend-1 frontend-2
  make_certs metadata-1 metadata-2 metadata-3 backend-1 backend-2 backend-3 frontend-1 frontend-2
  if [ ! -f "$jar" ]; then
    (cd "$root" && mvn -B -q -ntp -DskipTests package)
  fi
  local peers
  peers=$(metadata_peers)
  for n in 1 2 3; do
    launch metadata "$n" --node-id "m$n" --peers "$peers" --data-dir "$dir/metadata-$n/data" \
      --admin-port $((base + 110 + n))
  done
  for n in 1 2 3; do
    wait_for "http://$(host "metadata-$n"):$((base + 110 + n))/health" 180 OK
  done
  for n in 1 2 3; do
    launch backend "$n" --node-id "b$n" --metadata-peers "$peers" --raft-port $((base + 200 + n)) \
      --data-dir "$dir/backend-$n/data" --admin-port $((base + 210 + n))
  done
  for n in 1 2 3; do
    wait_hosting "http://$(host "backend-$n"):$((base + 210 + n))" "backend-$n"
  done
  # a frontend has no built-in key: it gets these (the dev credentials unless set, accepted on loopback only)
  keys
  for n in 1 2; do
    launch frontend "$n" --metadata-peers "$peers" --port $((base + 300 + n)) --admin-port $((base + 310 + n)) \
      --access-key "${SLUICE_ACCESS_KEY:-sluice}"
  done
  for n in 1 2; do
    wait_for "http://$(host "frontend-$n"):$((base + 310 + n))/health" 180 OK
  done
  for n in 1 2; do
    echo "http://$(host "frontend-$n"):$((base + 300 + n))"
  done
}

status() {
  local rc=0
  for f in "$dir"/*.pid; do
    [ -e "$f" ] || { echo "no cluster in $dir"; return 1; }
    name=$(basename "$f" .pid)
    if alive "$f"; then
      echo "$name running (pid $(cat "$f"))"
    else
      echo "$name DOWN"
      rc=1
    fi
  done
  # Ask the metadata leader: only it knows which backends are alive.
  local admin=110 id=m name=metadata
  if [ "$topology" = combined ]; then
    admin=310 id=n name=node
  fi
  for n in 1 2 3; do
    url="http://$(host "$name-$n" 2>/dev/null || echo 127.0.0.1):$((base + admin + n))"
    if curl -sf -H @"$dir/read-token.header" "$url/admin/status" 2>/dev/null \
        | grep -q "\"id\":\"$id$n\",[^}]*\"role\":\"leader\""; then
      "$java_bin" -jar "$jar" admin status --admin-url "$url" --token-file "$dir/read-token"
      return $rc
    fi
  done
  echo "no metadata leader answers" >&2
  return 1
}

stop() {
  local pids=()
  for f in "$dir"/*.pid; do
    [ -e "$f" ] || continue
    if alive "$f"; then
      pids+=("$(cat "$f")")
      kill "$(cat "$f")" 2>/dev/null || true
    fi
  done
  for p in "${pids[@]}"; do
    for _ in $(seq 1 150); do
      kill -0 "$p" 2>/dev/null || break
      sleep 0.2
    done
    kill -9 "$p" 2>/dev/null || true
  done
  rm -f "$dir"/*.pid
  if [ "$netns" = 1 ]; then # the hosts, their faults, and anything a killed run left in them
    "$netns_sh" down "$net"
    rm -f "$dir/netns"
  fi
  echo "stopped"
}

case "$cmd" in
  start) start ;;
  status) status ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop|status DIR" >&2; exit 2 ;;
esac
