#!/usr/bin/env bash
# Primary failover under the chaos run: a primary and a streaming replica built here as clusters of
# their own (initdb + pg_basebackup, PostgreSQL 15's pg_ctl, ports other than 5432, a temp
# directory removed at the end; the shared server on 5432 is not touched). Every service and the
# order writer use a multi-host URL with targetServerType=primary. At 70 % of the load the primary
# is killed (pg_ctl stop -m immediate) and the replica promoted (pg_ctl promote); nobody is told.
#
#   scripts/chaos-failover.sh sync     # synchronous_standby_names = '*': expect 0 lost, 0 doubled
#   scripts/chaos-failover.sh async    # asynchronous; the replication stream runs through a forwarder of
#                                      # the run's own, cut ASYNC_LAG_SECONDS (2; 0 for none) before the
#                                      # primary dies: what it committed meanwhile is the lost tail, counted
#   scripts/chaos-failover.sh sync --load 5m --rate 16
#
# Needs root (the clusters run as the postgres user). Table: tools/chaos/target/chaos-summary-chaos-failover-<mode>.md
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-sync}; shift || true
case "$mode" in sync|async) ;; *) echo "usage: $0 sync|async [chaos options]" >&2; exit 2 ;; esac
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ "$(id -u)" != 0 ] || [ -z "$bin" ] || ! command -v runuser >/dev/null; then
  echo "chaos-failover: skipped, needs root, runuser and a PostgreSQL server package (initdb, pg_ctl, pg_basebackup)"
  exit 0
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
p1=$(free_port); p2=$(free_port); pf=$(free_port)
dir=$(mktemp -d /tmp/mailroom-failover-XXXXXX); chmod 755 "$dir"; chown postgres "$dir"
as_pg() { runuser -u postgres -- "$@"; }
cleanup() {
  pkill -f "TCP-LISTEN:$pf," >/dev/null 2>&1 || true
  as_pg "$bin/pg_ctl" -D "$dir/primary" stop -m immediate >/dev/null 2>&1 || true
  as_pg "$bin/pg_ctl" -D "$dir/replica" stop -m immediate >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
as_pg "$bin/initdb" -D "$dir/primary" -A trust -U postgres >"$dir/initdb.log" 2>&1
cat >>"$dir/primary/postgresql.conf" <<CONF
port = $p1
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
wal_level = replica
max_wal_senders = 5
max_connections = 200
hot_standby = on
CONF
if [ "$mode" = sync ]; then echo "synchronous_standby_names = '*'" >>"$dir/primary/postgresql.conf"; fi
as_pg "$bin/pg_ctl" -D "$dir/primary" -l "$dir/primary.log" -w start >/dev/null
lag=${ASYNC_LAG_SECONDS:-2}
replication_port=$p1
if [ "$mode" = async ] && [ "$lag" != 0 ]; then
  # the replica streams from the primary through a forwarder of the run's own, so the stream itself
  # can be cut (as a network cut or a stalled link would) while both servers keep running
  command -v socat >/dev/null || { echo "chaos-failover: async with a lag needs socat (apt-get install socat)"; exit 2; }
  as_pg socat "TCP-LISTEN:$pf,bind=127.0.0.1,reuseaddr,fork" "TCP:127.0.0.1:$p1" &
  for _ in $(seq 1 20); do (echo >"/dev/tcp/127.0.0.1/$pf") 2>/dev/null && break; sleep 0.2; done
  replication_port=$pf
fi
as_pg "$bin/pg_basebackup" -h 127.0.0.1 -p "$replication_port" -U postgres -D "$dir/replica" -R -X stream >"$dir/basebackup.log" 2>&1
sed -i "s/^port = $p1/port = $p2/" "$dir/replica/postgresql.conf"
# The copy of the primary's configuration would make the promoted replica wait, at every commit, for a
# synchronous standby it does not have (every COMMIT hung in SyncRep in the first run): with two nodes
# the survivor runs alone, as a failover manager without "strict" synchronous mode would leave it.
sed -i "/^synchronous_standby_names/d" "$dir/replica/postgresql.conf"
as_pg "$bin/pg_ctl" -D "$dir/replica" -l "$dir/replica.log" -w start >/dev/null
for _ in $(seq 1 30); do
  [ "$(as_pg psql -h 127.0.0.1 -p "$p1" -U postgres -Atc "select count(*) from pg_stat_replication where state = 'streaming'")" = 1 ] && break
  sleep 1
done
echo "primary 127.0.0.1:$p1, replica 127.0.0.1:$p2 ($mode), streaming; data in $dir"
# what the harness runs at 70 % of the load, as the postgres user
{
  echo "set -e"
  if [ "$mode" = async ] && [ "$lag" != 0 ]; then
    # the stream is cut $lag s before the primary dies: whatever the primary committed in those
    # seconds (orders, claims, idempotency records) never reaches the replica that takes over
    echo "pkill -f 'TCP-LISTEN:$pf,' || true; sleep $lag"
    echo "$bin/pg_ctl -D $dir/primary stop -m immediate"
  else
    echo "$bin/pg_ctl -D $dir/primary stop -m immediate"
  fi
  echo "$bin/pg_ctl -D $dir/replica promote -w"
} >"$dir/failover.sh"
chmod 755 "$dir/failover.sh"
export MAILROOM_TEST_DB_URL="jdbc:postgresql://127.0.0.1:$p1/postgres?user=postgres"
. scripts/chaos-lib.sh
args=("$@")
if [ ${#args[@]} -eq 0 ]; then args=(--load 40s --outage-at 8s --outage 5s); fi
chaos_java io.mailroom.chaos.ChaosRun \
  --work-dir "tools/chaos/target/chaos-failover-$mode" --failover-hosts "127.0.0.1:$p1,127.0.0.1:$p2" \
  --restart-postgres --restart-command "runuser -u postgres -- sh $dir/failover.sh" "${args[@]}"
