#!/usr/bin/env bash
# The bloat soak: capacity first, then ~80 % of it for a set time with a long REPEATABLE READ
# transaction in the middle. Writes soak.csv, soak.png and soak.md to out= (default tools/soak/target/soak).
#   scripts/soak.sh duration=20m txnStart=30% txnLength=30% load=0.8 sample=5s out=docs/soak
# server=embedded (default): its own PostgreSQL with autovacuum on (naptime=10s); server=shared: a fresh
# database on $MAILROOM_TEST_DB_URL (CI machines here run that server with autovacuum off).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/jdk.sh
mailroom_use_jdk
./mvnw -q -B -pl tools/soak -am -DskipTests package dependency:build-classpath \
  -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime >/dev/null
exec java -cp "tools/soak/target/classes:$(cat tools/soak/target/classpath.txt)" io.mailroom.soak.SoakRun "$@"
