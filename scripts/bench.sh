#!/usr/bin/env bash
# Runs the Mailroom benchmarks (module benchmarks) against a real PostgreSQL and prints the tables;
# the figures also go to tools/benchmarks/target/bench-results.json unless --output says otherwise.
#
#   scripts/bench.sh                  full run (about 10 minutes on 2 cores)
#   scripts/bench.sh --quick          every scenario on tiny sizes (CI smoke run, figures meaningless)
#   scripts/bench.sh --help           all options (batch sizes, rates, processes, pgbench path...)
#
# The server: $MAILROOM_TEST_DB_URL (a JDBC URL of a server where the user may CREATE DATABASE, e.g.
# jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres), else Testcontainers, else an embedded
# PostgreSQL. CPU of the database side is only measured when PostgreSQL runs on this host.
# JAVA_OPTS are passed to the benchmark JVM (e.g. -XX:StartFlightRecording=filename=bench.jfr).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

. scripts/jdk.sh
mailroom_use_jdk

# Build the tool and its reactor dependencies (never installed into ~/.m2): target/classpath.txt
# lists the jars, resolved to the sibling modules' target directories.
./mvnw -B -q ${MVN_OFFLINE:+-o} -pl tools/benchmarks -am -DskipTests package

# the dispatcher-only scenario's SMTP server that this project did not write: Debian's aiosmtpd
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && ! /usr/bin/python3 -c 'import aiosmtpd' 2>/dev/null; then
  echo "Installing python3-aiosmtpd (the dispatcher-only run against a third-party SMTP server)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-aiosmtpd >/dev/null; } \
    || echo "Could not install python3-aiosmtpd: that run will be skipped" >&2
fi

cp="$root/tools/benchmarks/target/classes:$(cat "$root/tools/benchmarks/target/classpath.txt")"
full=true
for a in "$@"; do [[ "$a" == "--quick" || "$a" == "--help" || "$a" == "-h" ]] && full=false; done
extra=()
# a full run also records the disk's fsync speed, which bounds every commit
$full && extra+=(--fsync-test 2)
exec "$JAVA_HOME/bin/java" ${JAVA_OPTS:-} -cp "$cp" io.mailroom.bench.BenchCommand "${extra[@]}" "$@"
