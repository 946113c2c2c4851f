#!/usr/bin/env bash
# The chaos run through PgBouncer in transaction pooling mode, then the throughput through it as a
# ratio to a direct connection in the same run. PgBouncer (Debian's pgbouncer, 1.18 here) is a
# process of the harness's own: its own port, config and auth file in a temp directory, in front
# of the run's fresh database on $MAILROOM_TEST_DB_URL; the system's pgbouncer and PostgreSQL
# configuration are never touched. Without the pgbouncer binary it says so and exits 0.
#
#   scripts/chaos-pgbouncer.sh                 # short: ~30 s of load with kill -9s, session kills,
#                                              # provider faults and an outage, then the ratio (about 3 min)
#   scripts/chaos-pgbouncer.sh --load 5m       # any option of scripts/chaos.sh (--long included)
#   THROUGHPUT_MESSAGES=8000 THROUGHPUT_ROUNDS=5 scripts/chaos-pgbouncer.sh
#
# The dispatchers run with MAILROOM_DB_POOLER=pgbouncer (prepareThreshold=0, settings per
# transaction) and a direct MAILROOM_LISTEN_DB_URL; the order writer goes through PgBouncer too.
# Tables: tools/chaos/target/chaos-summary-pgbouncer.md and tools/chaos/target/pooler-throughput.md.
# Exit status 0 = passed, 1 = a check failed.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! { [ -x /usr/sbin/pgbouncer ] || [ -x /usr/bin/pgbouncer ] || [ -x /usr/local/bin/pgbouncer ]; }; then
  echo "chaos-pgbouncer: skipped, pgbouncer is not installed (apt-get install pgbouncer)"
  exit 0
fi
. scripts/chaos-lib.sh
args=("$@")
if [ ${#args[@]} -eq 0 ]; then
  args=(--load 30s --outage-at 10s --outage 6s)
fi
status=0
chaos_java io.mailroom.chaos.ChaosRun \
  --work-dir tools/chaos/target/chaos-http-pgbouncer --pgbouncer "${args[@]}" || status=$?
chaos_java io.mailroom.chaos.PoolerThroughput \
  --messages "${THROUGHPUT_MESSAGES:-4000}" --rounds "${THROUGHPUT_ROUNDS:-3}" --out tools/chaos/target/pooler-throughput.md || status=1
exit $status
