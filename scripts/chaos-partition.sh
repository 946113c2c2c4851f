#!/usr/bin/env bash
# Dispatchers on separate hosts with a network partition (io.mailroom.chaos.PartitionRun): three
# dispatcher processes, each in a network namespace of this run's own (veth on a bridge in
# 10.216.77.0/24, used by nothing else), PostgreSQL and the provider stub reached through forwarders
# of the run's own on the bridge address. The forwarders add latency on every link (this kernel has
# no sch_netem for tc netem): the same fleet is measured with none and with --latency (50 ms per
# round trip), a burst's throughput and a paced trickle's commit-to-accept latency. Then host 1 is
# cut off (ip link set eth0 down) for longer than the lease while its process keeps running; its
# claims must be finished elsewhere, and back on the network it must record nothing over the new
# holders and send nothing twice. The namespaces and links are removed at the end. Needs root and
# iproute2: without them it says so and exits 0.
#
#   scripts/chaos-partition.sh                           # short: 2 x 300 emails measured, then 240 + ~120, 20 s cut, 8 s lease (~2 min)
#   scripts/chaos-partition.sh --messages 2000 --cut 60s --lease 15s --latency 50ms --burst 1000 --pace-rate 50 --pace-for 20s
#
# Table: tools/chaos/target/chaos-summary-partition.md; logs in tools/chaos/target/chaos-partition/.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
  echo "chaos-partition: skipped, needs root and iproute2 (ip)"
  exit 0
fi
. scripts/chaos-lib.sh
chaos_java io.mailroom.chaos.PartitionRun \
  --work-dir tools/chaos/target/chaos-partition "$@"
