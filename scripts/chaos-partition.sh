#!/usr/bin/env bash
# Dispatchers on separate hosts with a network partition (io.mailroom.chaos.PartitionRun): three
# dispatcher processes, each in a network namespace of this run's own (veth on a bridge in
# 10.216.77.0/24, used by nothing else; 50 ms netem delay per link), PostgreSQL and the provider stub
# reached through socat forwarders on the bridge address. Host 1 is cut off (ip link set eth0 down)
# for longer than the lease while its process keeps running; its claims must be finished elsewhere,
# and back on the network it must record nothing over the new holders and send nothing twice. The
# namespaces, links and forwarders are removed at the end. Needs root, iproute2 and socat: without
# them it says so and exits 0.
#
#   scripts/chaos-partition.sh                           # short: 240 + 120 emails, 20 s cut, 8 s lease (~1.5 min)
#   scripts/chaos-partition.sh --messages 2000 --cut 60s --lease 15s
#
# Table: tools/chaos/target/chaos-summary-partition.md; logs in tools/chaos/target/chaos-partition/.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v socat >/dev/null || ! command -v tc >/dev/null; then
  echo "chaos-partition: skipped, needs root, iproute2 (ip, tc) and socat"
  exit 0
fi
. scripts/chaos-lib.sh
chaos_java io.mailroom.chaos.PartitionRun \
  --work-dir tools/chaos/target/chaos-partition "$@"
