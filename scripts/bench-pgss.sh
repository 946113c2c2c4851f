#!/usr/bin/env bash
# The PostgreSQL side of a benchmark, statement by statement: runs scripts/bench.sh against a
# PostgreSQL cluster of its own (initdb in a temp directory, a free port, pg_stat_statements loaded;
# the shared server's configuration is never touched), then prints pg_stat_statements for the
# benchmark's database: calls, total and mean time, rows, and shared blocks per statement, top 25 by
# total time. The cluster is removed at the end.
#
#   scripts/bench-pgss.sh --scenarios dispatch-only --dispatch-providers http --dispatch-emails 20000
#
# PGSS_FULL=N also prints the whole text of the top N statements; PGSS_EXPLAIN_MS=M logs the plan
# (auto_explain, analyze and buffers, no timing) and the bind parameters of every statement over M ms
# to PGSS_EXPLAIN_LOG
# (default /tmp/mailroom-pgss-explain.log).
# Needs root (the cluster runs as the postgres user) and a PostgreSQL server package. Any bench.sh option works.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ "$(id -u)" != 0 ] || [ -z "$bin" ] || ! command -v runuser >/dev/null; then
  echo "bench-pgss: needs root, runuser and a PostgreSQL server package (initdb, pg_ctl)" >&2
  exit 2
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
dir=$(mktemp -d /tmp/mailroom-pgss-XXXXXX); chmod 755 "$dir"; chown postgres "$dir"
as_pg() { runuser -u postgres -- "$@"; }
cleanup() {
  as_pg "$bin/pg_ctl" -D "$dir/data" stop -m fast >/dev/null 2>&1 || true
  if [ -n "${PGSS_EXPLAIN_MS:-}" ] && [ -f "$dir/server.log" ]; then
    cp "$dir/server.log" "${PGSS_EXPLAIN_LOG:-/tmp/mailroom-pgss-explain.log}"
    echo "bench-pgss: plans of statements over ${PGSS_EXPLAIN_MS} ms in ${PGSS_EXPLAIN_LOG:-/tmp/mailroom-pgss-explain.log}"
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
as_pg "$bin/initdb" -D "$dir/data" -A trust -U postgres >"$dir/initdb.log" 2>&1
# the shared server's settings that matter for the figures, copied, plus the statement statistics
shared_buffers=$(psql -h 127.0.0.1 -U postgres -Atc "show shared_buffers" 2>/dev/null || echo 128MB)
cat >>"$dir/data/postgresql.conf" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
max_connections = 300
shared_buffers = $shared_buffers
shared_preload_libraries = 'pg_stat_statements${PGSS_EXPLAIN_MS:+,auto_explain}'
pg_stat_statements.max = 5000
pg_stat_statements.track = all
CONF
if [ -n "${PGSS_EXPLAIN_MS:-}" ]; then
  cat >>"$dir/data/postgresql.conf" <<CONF
auto_explain.log_min_duration = ${PGSS_EXPLAIN_MS}
auto_explain.log_analyze = on
auto_explain.log_buffers = on
auto_explain.log_timing = off
auto_explain.log_nested_statements = on
log_min_duration_statement = ${PGSS_EXPLAIN_MS}
CONF
fi
as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
psql -h 127.0.0.1 -p "$port" -U postgres -qc "CREATE EXTENSION pg_stat_statements" postgres
echo "bench-pgss: PostgreSQL with pg_stat_statements on 127.0.0.1:$port"
# the benchmark drops its databases at the end; pg_stat_statements keeps their statements by database oid
MAILROOM_TEST_DB_URL="jdbc:postgresql://127.0.0.1:$port/postgres?user=postgres" scripts/bench.sh "$@"
psql -h 127.0.0.1 -p "$port" -U postgres -P pager=off postgres <<'SQL'
\echo 'pg_stat_statements, every benchmark database, top 25 by total execution time'
SELECT calls, round(total_exec_time::numeric, 0) AS total_ms, round(mean_exec_time::numeric, 3) AS mean_ms,
       rows, shared_blks_hit + shared_blks_read AS blocks, wal_records,
       left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS statement
FROM pg_stat_statements s
WHERE s.dbid NOT IN (SELECT oid FROM pg_database WHERE datname IN ('postgres', 'template1'))
ORDER BY total_exec_time DESC LIMIT 25;
SQL
if [ -n "${PGSS_FULL:-}" ]; then
  psql -h 127.0.0.1 -p "$port" -U postgres -P pager=off -At postgres <<SQL
\echo 'full text of the top ${PGSS_FULL} statements by total execution time'
SELECT '---- ' || calls || ' calls, ' || round(total_exec_time::numeric, 0) || ' ms' || chr(10) || query
FROM pg_stat_statements s
WHERE s.dbid NOT IN (SELECT oid FROM pg_database WHERE datname IN ('postgres', 'template1'))
ORDER BY total_exec_time DESC LIMIT ${PGSS_FULL};
SQL
fi
