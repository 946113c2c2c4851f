#!/usr/bin/env bash
# Support's searches over a history of N emails (issue 26): builds the database mailroom_search_N once
# on $MAILROOM_TEST_DB_URL's server (kept for the next run; --rebuild to start over), then prints each
# search's median time over 5 runs, the indexes it used and whether it scanned the history.
#
#   scripts/bench-search.sh --emails 1000000
#   SEARCH_BENCH_PLANS=1 scripts/bench-search.sh --emails 10000000     # with every plan
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
. scripts/jdk.sh
mailroom_use_jdk
./mvnw -B -q ${MVN_OFFLINE:+-o} -pl tools/benchmarks -am -DskipTests package
cp="$root/tools/benchmarks/target/classes:$(cat "$root/tools/benchmarks/target/classpath.txt")"
exec "$JAVA_HOME/bin/java" ${JAVA_OPTS:-} -cp "$cp" io.mailroom.bench.SearchBench "$@"
