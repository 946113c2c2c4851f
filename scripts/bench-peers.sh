#!/usr/bin/env bash
# Peer benchmark: another PostgreSQL job queue draining no-op jobs on the same server as
# scripts/bench.sh, measured the same way (msg/s; CPU per 1,000 jobs of the client process and of
# the database's client backends, from /proc). Today one peer: graphile-worker (Node), pinned in
# tools/benchmarks/peers/graphile-worker/package-lock.json and installed by `npm ci` into
# tools/benchmarks/target/peers/graphile-worker (never committed).
#
#   scripts/bench-peers.sh                          100,000 jobs after a 10,000-job warm-up, tuned settings
#   scripts/bench-peers.sh --messages 50000 --repeat 2
#   scripts/bench-peers.sh --concurrency 24 --pool 25 --local-queue 500 --complete-delay 0 --fail-delay 0
#
# Defaults are the configuration of graphile-worker's own "Performance" page (concurrentJobs 24,
# maxPoolSize 25, localQueue.size 500, completeJobBatchDelay 0, failJobBatchDelay 0); --local-queue 0
# and --complete-delay -1 give its per-job defaults. The server is $MAILROOM_TEST_DB_URL (a JDBC URL,
# as for the tests and scripts/bench.sh; default the local server 127.0.0.1:5432 as user postgres).
# Each repetition runs in a fresh database, dropped afterwards. --output FILE keeps the last result as JSON.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/tools/benchmarks/peers/graphile-worker"
work="$root/tools/benchmarks/target/peers/graphile-worker"

messages=100000 warmup=10000 repeat=1 output=""
export GW_CONCURRENCY=24 GW_POOL=25 GW_LOCAL_QUEUE=500 GW_COMPLETE_DELAY=0 GW_FAIL_DELAY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --messages) messages=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --concurrency) GW_CONCURRENCY=$2; shift 2 ;;
    --pool) GW_POOL=$2; shift 2 ;;
    --local-queue) GW_LOCAL_QUEUE=$2; shift 2 ;;
    --complete-delay) GW_COMPLETE_DELAY=$2; shift 2 ;;
    --fail-delay) GW_FAIL_DELAY=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-peers: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

command -v node >/dev/null && command -v npm >/dev/null || { echo "bench-peers: needs node and npm" >&2; exit 2; }
command -v psql >/dev/null || { echo "bench-peers: needs psql" >&2; exit 2; }

# install the pinned packages when the lock file changed since the last install
mkdir -p "$work"
if ! cmp -s "$src/package-lock.json" "$work/package-lock.json" || [ ! -d "$work/node_modules" ]; then
  cp "$src/package.json" "$src/package-lock.json" "$work/"
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
fi
cp "$src/bench.mjs" "$work/"

# jdbc:postgresql://host:port/db?user=u&password=p -> host, port, user, password for psql and node
jdbc=${MAILROOM_TEST_DB_URL:-jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}
rest=${jdbc#jdbc:postgresql://}
hostport=${rest%%/*}; after=${rest#*/}; query=""
[[ "$after" == *\?* ]] && query=${after#*\?}
host=${hostport%%:*}; port=5432; [[ "$hostport" == *:* ]] && port=${hostport#*:}
user=postgres password=""
IFS='&' read -ra params <<<"$query"
for p in "${params[@]}"; do
  case "$p" in user=*) user=${p#user=} ;; password=*) password=${p#password=} ;; esac
done
export PGHOST=$host PGPORT=$port PGUSER=$user
[ -n "$password" ] && export PGPASSWORD=$password

for i in $(seq 1 "$repeat"); do
  db="mailroom_peer_gw_$$_$i"
  psql -qAt -d postgres -c "CREATE DATABASE $db" >/dev/null
  trap 'psql -qAt -d postgres -c "DROP DATABASE IF EXISTS '"$db"' WITH (FORCE)" >/dev/null 2>&1 || true' EXIT
  DATABASE_URL="postgres://$user${password:+:$password}@$host:$port/$db" GW_MESSAGES=$messages GW_WARMUP=$warmup \
    GW_OUTPUT=$output node "$work/bench.mjs"
  psql -qAt -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
done
