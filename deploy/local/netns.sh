#!/usr/bin/env bash
# Hosts on one machine, and the network faults between them. Each host is a Linux network namespace with an address
# of its own on a private bridge: processes started in different hosts reach each other over a network that can be
# cut, as separate machines would. The machine itself keeps an address on the bridge, so clients and tests outside
# every namespace reach every host; the faults below only ever cut links between hosts.
#
#   netns.sh up NET NAME...         make a host per NAME (idempotent); print "NAME ADDRESS" for each
#   netns.sh address NET NAME       print NAME's address
#   netns.sh exec NET NAME CMD...   run CMD in NAME (exec: keeps the PID)
#   netns.sh isolate NET NAME       cut NAME from every other host, both ways
#   netns.sh split NET A,B C,...    cut every host of the first side from every host of the second, both ways
#   netns.sh cut NET FROM TO        one way: FROM's packets to TO are lost, TO's packets to FROM arrive
#   netns.sh slow NET NAME DELAY_MS JITTER_MS LOSS_PERCENT SECONDS
#                                   NAME's links to the other hosts: packets it sends wait DELAY_MS +- JITTER_MS, and
#                                   LOSS_PERCENT of the packets it receives from them are lost, for at most SECONDS
#   netns.sh heal NET [NAME...]     lift every fault (of the hosts named, else of all of NET's hosts)
#   netns.sh down NET               remove NET: its hosts (killing what still runs in them), bridge and faults
#   netns.sh list                   the networks that exist (a killed run's leftovers show here; `down` removes them)
#
# NET is a number 1-250 that keeps concurrent clusters apart: its hosts are the namespaces sluice-NET-NAME, addresses
# 10.231.NET.11 upwards; the machine is 10.231.NET.1 on the bridge slbrNET. Needs root, iproute2 and iptables
# (iptables-legacy when installed); `slow` builds deploy/local/netdelay.c (gcc, libnetfilter-queue-dev) on first use,
# because this kernel has no netem: iptables hands the packets to NFQUEUE and that program holds them.
#
# Every fault is a packet filter (or a delay program) inside a host's own namespace, so it touches nothing but the
# namespaces made here. Packets are dropped where they arrive (INPUT): the sender sees silence, as across a broken
# switch, never an immediate error.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
ipt=iptables
command -v iptables-legacy >/dev/null 2>&1 && ipt=iptables-legacy
delay_bin=${SLUICE_NETDELAY_BIN:-$root/target/netdelay/sluice-netdelay}

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

net_ok() {
  [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 250 ] || { echo "NET must be 1-250, not $1" >&2; exit 2; }
}

ns() { echo "sluice-$1-$2"; }

# the hosts of NET, by name
hosts() {
  ip netns list | awk '{print $1}' | { grep "^sluice-$1-" || true; } | sed "s/^sluice-$1-//"
}

address() {
  local a
  a=$(ip -n "$(ns "$1" "$2")" -4 -o addr show dev eth0 2>/dev/null | awk '{print $4}' | cut -d/ -f1)
  [ -n "$a" ] || { echo "no host $2 in network $1" >&2; exit 1; }
  echo "$a"
}

up() {
  local net=$1; shift
  local bridge=slbr$net
  if ! ip link show "$bridge" >/dev/null 2>&1; then
    ip link add "$bridge" type bridge
    ip addr add "10.231.$net.1/24" dev "$bridge"
    ip link set "$bridge" up
  fi
  for name in "$@"; do
    [[ "$name" =~ ^[A-Za-z0-9_-]{1,20}$ ]] || { echo "bad host name $name" >&2; exit 2; }
    local n
    n=$(ns "$net" "$name")
    if ! ip netns list | awk '{print $1}' | grep -qx "$n"; then
      local used i=11
      used=$(for h in $(hosts "$net"); do address "$net" "$h"; done | awk -F. '{print $4}')
      while echo "$used" | grep -qx "$i"; do i=$((i + 1)); done
      [ "$i" -le 250 ] || { echo "network $net is full" >&2; exit 1; }
      ip netns add "$n"
      # the same name may still be on its way out (a namespace of an earlier run, deleted asynchronously)
      local try
      for try in 1 2 3 4 5 6; do
        ip link add "slv$net-$i" type veth peer name eth0 netns "$n" 2>/dev/null && break
        [ "$try" -lt 6 ] || ip link add "slv$net-$i" type veth peer name eth0 netns "$n" # its error, then exit
        sleep 0.5
      done
      ip link set "slv$net-$i" master "$bridge" up
      ip -n "$n" addr add "10.231.$net.$i/24" dev eth0
      ip -n "$n" link set eth0 up
      ip -n "$n" link set lo up
    fi
    echo "$name $(address "$net" "$name")"
  done
}

# in NAME's namespace: drop what arrives from the address given
drop_from() {
  ip netns exec "$(ns "$1" "$2")" "$ipt" -w -A INPUT -s "$3" -j DROP
}

isolate() {
  local net=$1 name=$2 me
  me=$(address "$net" "$name")
  for other in $(hosts "$net"); do
    [ "$other" = "$name" ] && continue
    drop_from "$net" "$name" "$(address "$net" "$other")"
    drop_from "$net" "$other" "$me"
  done
}

split() {
  local net=$1 a b
  IFS=, read -r -a a <<<"$2"
  IFS=, read -r -a b <<<"$3"
  for x in "${a[@]}"; do
    for y in "${b[@]}"; do
      drop_from "$net" "$x" "$(address "$net" "$y")"
      drop_from "$net" "$y" "$(address "$net" "$x")"
    done
  done
}

build_delay() {
  local src=$root/deploy/local/netdelay.c
  if [ ! -x "$delay_bin" ] || [ "$src" -nt "$delay_bin" ]; then
    mkdir -p "$(dirname "$delay_bin")"
    gcc -O2 -o "$delay_bin.tmp" "$src" -lnetfilter_queue
    mv "$delay_bin.tmp" "$delay_bin"
  fi
}

slow() {
  local net=$1 name=$2 delay=$3 jitter=$4 loss=$5 seconds=$6 n
  n=$(ns "$net" "$name")
  for v in "$delay" "$jitter" "$loss" "$seconds"; do
    [[ "$v" =~ ^[0-9]+$ ]] || { echo "slow: numbers expected, not $v" >&2; exit 2; }
  done
  [ "$seconds" -ge 1 ] && [ "$seconds" -le 3600 ] || { echo "slow: 1-3600 seconds" >&2; exit 2; }
  for other in $(hosts "$net"); do
    [ "$other" = "$name" ] && continue
    local peer
    peer=$(address "$net" "$other")
    if [ "$loss" -gt 0 ]; then
      ip netns exec "$n" "$ipt" -w -A INPUT -s "$peer" -m statistic --mode random \
        --probability "$(awk "BEGIN{print $loss/100}")" -j DROP
    fi
    if [ "$delay" -gt 0 ]; then
      ip netns exec "$n" "$ipt" -w -A OUTPUT -d "$peer" -j NFQUEUE --queue-num 7 --queue-bypass
    fi
  done
  if [ "$delay" -gt 0 ]; then
    build_delay
    # bounded: it exits after SECONDS; its comm name lets heal and down find it
    ip netns exec "$n" setsid "$delay_bin" 7 "$delay" "$jitter" "$seconds" </dev/null >/dev/null 2>&1 &
  fi
}

kill_delays() {
  for pid in $(ip netns pids "$1" 2>/dev/null); do
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sluice-netdelay ]; then
      kill "$pid" 2>/dev/null || true
    fi
  done
}

heal() {
  local net=$1; shift
  local names=("$@")
  [ ${#names[@]} -gt 0 ] || mapfile -t names < <(hosts "$net")
  for name in "${names[@]}"; do
    local n
    n=$(ns "$net" "$name")
    ip netns exec "$n" "$ipt" -w -F INPUT
    ip netns exec "$n" "$ipt" -w -F OUTPUT
    kill_delays "$n"
  done
}

down() {
  local net=$1
  for name in $(hosts "$net"); do
    local n
    n=$(ns "$net" "$name")
    for pid in $(ip netns pids "$n" 2>/dev/null); do
      kill -9 "$pid" 2>/dev/null || true
    done
    ip netns del "$n"
  done
  ip link del "slbr$net" 2>/dev/null || true
  # A deleted namespace's links go asynchronously: an "up" of the same network right after would find a veth name
  # still taken ("RTNETLINK answers: File exists"). Wait until they are gone (bounded), deleting any that stay.
  local tries=0
  while ip -o link show | grep -q ": slv$net-[0-9]*@"; do
    tries=$((tries + 1))
    if [ "$tries" -gt 50 ]; then
      for link in $(ip -o link show | sed -n "s/^[0-9]*: \(slv$net-[0-9]*\)@.*/\1/p"); do
        ip link del "$link" 2>/dev/null || true
      done
      break
    fi
    sleep 0.1
  done
}

list() {
  ip -o link show type bridge | awk -F': ' '{print $2}' | { grep '^slbr[0-9]*$' || true; } | sed 's/^slbr//'
  ip netns list | awk '{print $1}' | sed -n 's/^sluice-\([0-9]*\)-.*/\1/p'
}

cmd=${1:-}
[ -n "$cmd" ] || usage
shift
case "$cmd" in
  list) list | sort -n -u ;;
  up) [ $# -ge 2 ] || usage; net_ok "$1"; up "$@" ;;
  address) [ $# -eq 2 ] || usage; net_ok "$1"; address "$1" "$2" ;;
  exec) [ $# -ge 3 ] || usage; net_ok "$1"; n=$(ns "$1" "$2"); shift 2; exec ip netns exec "$n" "$@" ;;
  isolate) [ $# -eq 2 ] || usage; net_ok "$1"; isolate "$1" "$2" ;;
  split) [ $# -eq 3 ] || usage; net_ok "$1"; split "$1" "$2" "$3" ;;
  cut) [ $# -eq 3 ] || usage; net_ok "$1"; drop_from "$1" "$3" "$(address "$1" "$2")" ;;
  slow) [ $# -eq 6 ] || usage; net_ok "$1"; slow "$@" ;;
  heal) [ $# -ge 1 ] || usage; net_ok "$1"; heal "$@" ;;
  down) [ $# -eq 1 ] || usage; net_ok "$1"; down "$1" ;;
  *) usage ;;
esac
